"""What a product page declares of its product in JSON-LD: name, price and description.

Shops often draw the description from script, or fold it into a tab the page never fills, yet
ship it whole in their schema.org ``Product``. When the rendered page lacks what that data
holds, the reader gets it from there, as a short block ahead of the page.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from selectolax.lexbor import LexborHTMLParser

from .markdown.writer import escape_text

_WORD: Final = re.compile(r"\w+")
_TAG: Final = re.compile(r"<[^>]+>")
# A declared text counts as shown when this share of its words is in the rendered page.
_SHOWN_SHARE: Final = 0.6
_MAX_DEPTH: Final = 6


@dataclass(frozen=True, slots=True)
class Product:
    """A schema.org ``Product``, as the page declares it."""

    name: str
    price: str
    description: str


def declared_product(tree: LexborHTMLParser) -> Product | None:
    """The one ``Product`` the page's JSON-LD declares, if it declares exactly one."""
    found: list[Product] = []
    for script in tree.css('script[type="application/ld+json"]'):
        try:
            data = json.loads(script.text())
        except ValueError:
            continue
        found.extend(_products(data, 0))
    return found[0] if len(found) == 1 else None


def _products(data: object, depth: int) -> Iterator[Product]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(data, list):
        for item in data:
            yield from _products(item, depth + 1)
        return
    if not isinstance(data, dict):
        return
    kind = data.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "Product" in kinds:
        yield Product(
            _text(data.get("name")), _price(data.get("offers")), _text(data.get("description"))
        )
        return
    graph = data.get("@graph")
    if graph is not None:
        yield from _products(graph, depth + 1)


def _text(value: object) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG.sub(" ", value)).split())


def _price(offers: object) -> str:
    if isinstance(offers, list):
        offers = offers[0] if offers else None
    if not isinstance(offers, dict):
        return ""
    price = offers.get("price", offers.get("lowPrice"))
    if not isinstance(price, (str, int, float)) or isinstance(price, bool):
        return ""
    currency = offers.get("priceCurrency")
    return f"{price} {currency}" if isinstance(currency, str) else str(price)


def missing_facts(product: Product, markdown: str) -> str:
    """Markdown for what the page declares of its product but the rendering does not show."""
    shown = set(_WORD.findall(markdown.lower()))
    lines: list[str] = []
    if product.name and not _is_shown(product.name, shown):
        lines.append(f"# {escape_text(product.name)}")
    if product.price and not _is_shown(product.price, shown):
        lines.append(f"Price: {escape_text(product.price)}")
    if product.description and not _is_shown(product.description, shown):
        lines.append(escape_text(product.description))
    return "\n\n".join(lines)


def _is_shown(text: str, shown: set[str]) -> bool:
    words = _WORD.findall(text.lower())
    return not words or sum(word in shown for word in words) >= _SHOWN_SHARE * len(words)
