"""Heuristic vocabularies of the Readability scoring pass.

They live apart from the algorithm so that tuning a word list never touches control flow. The
class/id patterns are case-sensitive and lowercase: callers match them against lowercased text,
which is several times faster than `re.IGNORECASE` on the hot path.
"""

from __future__ import annotations

import re
from typing import Final


def words(text: str) -> frozenset[str]:
    """Build a set of names from a space-separated string, which keeps long lists compact."""
    return frozenset(text.split())


# Whole words of class and id values (split at punctuation and camelCase), not substrings.
UNLIKELY_WORDS: Final = words(
    "ai2html banner breadcrumbs combx comment community disqus extra footer gdpr header "
    "legends menu related remark replies rss shoutbox sidebar skyscraper social sponsor "
    "supplemental agegate pagination pager popup cookie cookies consent onetrust"
)
# Names that only furniture carries (gallery legends, ad slots): dropped even when they hold most
# of the page's text, which the common layout names are not.
UNLIKELY_SURE: Final = words(
    "ai2html combx legends shoutbox skyscraper agegate gdpr disqus cookie cookies consent onetrust "
    "fides cookiebot usercentrics didomi trustarc truste osano"
)
# Matched as substrings of the lowercased class/id string.
UNLIKELY_PHRASES: Final = ("-ad-", "cover-wrap", "ad-break", "yom-remote")
MAYBE_CANDIDATE: Final = re.compile(r"article|body|column|content|main|mathjax|shadow")
POSITIVE: Final = re.compile(
    r"article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story"
)
NEGATIVE: Final = re.compile(
    r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr"
    r"|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper"
    r"|sponsor|shopping|tags|widget"
)
SHARE_ELEMENTS: Final = re.compile(r"(\b|_)(share|sharedaddy)(\b|_)")
VIDEO_HOSTS: Final = re.compile(
    r"//(www\.)?((dailymotion|youtube|youtube-nocookie|player\.vimeo|v\.qq|bilibili|live\.bilibili)"
    r"\.(com|net)|(archive|upload\.wikimedia)\.org|player\.twitch\.tv)",
    re.IGNORECASE,
)
AD_WORDS: Final = re.compile(
    r"^(ad(vertising|vertisement)?|pub(licité)?|werb(ung)?|广告|Реклама|Anuncio)$", re.IGNORECASE
)
LOADING_WORDS: Final = re.compile(
    r"^((loading|正在加载|Загрузка|chargement|cargando)(…|\.\.\.)?)$", re.IGNORECASE
)
# Commas of many scripts; counted one by one with str.count, several times faster than a regex.
COMMAS: Final = tuple(",\u060c\ufe50\ufe10\ufe11\u2e41\u2e34\u2e32\uff0c")
SENTENCE_END: Final = re.compile(r"\.( |$)")
DISPLAY_HIDDEN: Final = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)

UNLIKELY_ROLES: Final = words("menu menubar complementary navigation alert alertdialog dialog")
# List items too: a product's description is often its bullet points, a listing's text its items.
TAGS_TO_SCORE: Final = "p,td,pre,section,h2,h3,h4,h5,h6,li"
# An element holding any of these is a container, not a paragraph (Readability's DIV_TO_P_ELEMS).
BLOCK_INSIDE_DIV: Final = "blockquote,dl,div,img,ol,p,pre,table,ul"
PHRASING_TAGS: Final = words(
    "-text abbr audio b bdo br button cite code data datalist dfn em embed i img input kbd "
    "label mark math meter noscript object output progress q ruby samp script select small "
    "span strong sub sup textarea time var wbr a del ins font s strike u tt big nobr acronym"
)
# Removed before anything else: never content, and their text would skew every length count.
NEVER_CONTENT: Final = (
    "script,style,noscript,template,link,meta,iframe,object,embed,canvas,input,select,textarea,"
    "button,dialog,svg,rt,rp"
)
TAG_SCORE: Final = {
    "div": 5,
    **dict.fromkeys(words("pre td blockquote"), 3),
    **dict.fromkeys(words("address ol ul dl dd dt li form"), -3),
    **dict.fromkeys(words("h1 h2 h3 h4 h5 h6 th"), -5),
}
