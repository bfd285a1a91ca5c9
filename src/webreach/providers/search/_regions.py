"""Country and language codes in the terms some search APIs take.

ISO 3166-1 alpha-2 → the English country name Tavily's ``country`` takes, and the language most
of a country's web is written in (for APIs that take one locale, country and language together,
such as ``ddgs``'s ``region`` and SearXNG's ``language``), and back.
"""

from __future__ import annotations

__all__ = ["COUNTRY_LANGUAGE", "COUNTRY_NAMES", "LANGUAGE_COUNTRY"]


def _table(text: str) -> dict[str, str]:
    parts = (item.strip().partition(" ") for item in text.split(";") if item.strip())
    return {code: value for code, _, value in parts}


COUNTRY_NAMES = _table(
    "AF afghanistan; AL albania; DZ algeria; AD andorra; AO angola; AR argentina; AM armenia;"
    " AU australia; AT austria; AZ azerbaijan; BS bahamas; BH bahrain; BD bangladesh;"
    " BB barbados; BY belarus; BE belgium; BZ belize; BJ benin; BT bhutan; BO bolivia;"
    " BA bosnia and herzegovina; BW botswana; BR brazil; BN brunei; BG bulgaria;"
    " BF burkina faso; BI burundi; KH cambodia; CM cameroon; CA canada; CV cape verde;"
    " CF central african republic; TD chad; CL chile; CN china; CO colombia; KM comoros;"
    " CG congo; CR costa rica; HR croatia; CU cuba; CY cyprus; CZ czech republic; DK denmark;"
    " DJ djibouti; DO dominican republic; EC ecuador; EG egypt; SV el salvador;"
    " GQ equatorial guinea; ER eritrea; EE estonia; ET ethiopia; FJ fiji; FI finland;"
    " FR france; GA gabon; GM gambia; GE georgia; DE germany; GH ghana; GR greece;"
    " GT guatemala; GN guinea; HT haiti; HN honduras; HU hungary; IS iceland; IN india;"
    " ID indonesia; IR iran; IQ iraq; IE ireland; IL israel; IT italy; JM jamaica; JP japan;"
    " JO jordan; KZ kazakhstan; KE kenya; KW kuwait; KG kyrgyzstan; LV latvia; LB lebanon;"
    " LS lesotho; LR liberia; LY libya; LI liechtenstein; LT lithuania; LU luxembourg;"
    " MG madagascar; MW malawi; MY malaysia; MV maldives; ML mali; MT malta; MR mauritania;"
    " MU mauritius; MX mexico; MD moldova; MC monaco; MN mongolia; ME montenegro; MA morocco;"
    " MZ mozambique; MM myanmar; NA namibia; NP nepal; NL netherlands; NZ new zealand;"
    " NI nicaragua; NE niger; NG nigeria; KP north korea; MK north macedonia; NO norway;"
    " OM oman; PK pakistan; PA panama; PG papua new guinea; PY paraguay; PE peru;"
    " PH philippines; PL poland; PT portugal; QA qatar; RO romania; RU russia; RW rwanda;"
    " SA saudi arabia; SN senegal; RS serbia; SG singapore; SK slovakia; SI slovenia;"
    " SO somalia; ZA south africa; KR south korea; SS south sudan; ES spain; LK sri lanka;"
    " SD sudan; SE sweden; CH switzerland; SY syria; TW taiwan; TJ tajikistan; TZ tanzania;"
    " TH thailand; TG togo; TT trinidad and tobago; TN tunisia; TR turkey; TM turkmenistan;"
    " UG uganda; UA ukraine; AE united arab emirates; GB united kingdom; US united states;"
    " UY uruguay; UZ uzbekistan; VE venezuela; VN vietnam; YE yemen; ZM zambia; ZW zimbabwe"
)
"""Tavily's ``country`` names (its API takes a lower-case English name, not a code)."""

COUNTRY_LANGUAGE = _table(
    "US en; GB en; AU en; CA en; NZ en; IE en; IN en; ZA en; SG en; PH en; NG en; KE en;"
    " DE de; AT de; CH de; FR fr; BE fr; LU fr; ES es; MX es; AR es; CL es; CO es; PE es;"
    " VE es; UY es; EC es; BR pt; PT pt; IT it; NL nl; PL pl; RU ru; UA uk; CZ cs; SK sk;"
    " SE sv; NO no; DK da; FI fi; EE et; LV lv; LT lt; HU hu; RO ro; BG bg; HR hr; SI sl;"
    " RS sr; GR el; TR tr; IL he; SA ar; AE ar; EG ar; IR fa; JP ja; KR ko; CN zh; TW zh;"
    " HK zh; VN vi; TH th; ID id; MY ms; IS is"
)
"""The main language of a country's web, for an API that needs both and was given a country."""

LANGUAGE_COUNTRY = _table(
    "en us; de de; fr fr; es es; pt pt; it it; nl nl; pl pl; ru ru; uk ua; cs cz; sk sk;"
    " sv se; no no; nb no; da dk; fi fi; et ee; lv lv; lt lt; hu hu; ro ro; bg bg; hr hr;"
    " sl si; sr rs; el gr; tr tr; he il; ar sa; fa ir; ja jp; ko kr; zh cn; vi vn; th th;"
    " id id; ms my; is is; hi in"
)
"""The country whose web a language is most written in, for an API that needs both and was
given a language (lower-case codes)."""
