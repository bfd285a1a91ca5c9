"""How each kind of page is read: which blocks join the best one, which layout names are
furniture, whether the chosen blocks are cleaned as an article's are, and when the page's
declared main region replaces the choice.

A thread is many posts of similar weight, a product page a description beside its specs and its
buy box, a listing its items: every block, not the best one, is the content. A listing's items
are each a linked title with a line or two of text, the very shape Readability's cleaning drops
as link farms; and their titles are links, so a main region of items is link text by nature.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..patterns import words
from .kinds import Kind

_TOP_CANDIDATES: Final = 5
# Other top candidates scoring at least this share of the best one may widen the choice.
_ALTERNATIVE_SHARE: Final = 0.75


@dataclass(frozen=True, slots=True)
class Widening:
    """When other top candidates join the best one: how many are ranked, the share of the best
    score that makes one an alternative, and how many alternatives one ancestor must hold."""

    ranked: int = _TOP_CANDIDATES
    share: float = _ALTERNATIVE_SHARE
    needed: int = 3
    disjoint: bool = False
    """Alternatives must be other blocks than the best one: not its wrappers, not its parts."""


ARTICLE_WIDENING: Final = Widening()
MANY_BLOCKS_WIDENING: Final = Widening(ranked=12, share=0.2, needed=2, disjoint=True)


@dataclass(frozen=True, slots=True)
class Reading:
    """The rules one kind of page is read by."""

    widening: Widening = ARTICLE_WIDENING
    furniture: frozenset[str] = frozenset()
    """More layout names that are furniture on this kind of page only."""
    clean_conditionally: bool = True
    """Drop blocks whose shape says boilerplate (link-heavy, list-heavy), as in an article."""
    enough: int = 500
    """A pass that finds this many characters is kept; with fewer, the next relaxes its rules."""
    main_link_density: float = 0.5
    """The declared main region replaces the choice only under this share of link text."""
    furniture_selector: str = ""
    """Elements that are furniture on this kind of page by what they do, whatever their names."""
    cleaning_may_take: float = 0.3
    """The most of the chosen blocks' text the article cleaning may drop. Past it, the cleaning
    has more often misread the layout than found boilerplate (page builders name every block a
    "widget", utility CSS calls containers "overflow-hidden", a card is a heading and a line),
    and the page is read again with only its link farms cleaned away."""
    posts: frozenset[str] = frozenset()
    """Names an article's furniture carries that this kind's content does (a thread's posts are
    its comments and replies): not unlikely here."""
    quotes_repeat: bool = False
    """A block repeated word for word in another parent is a quote of it (a thread's replies
    quote its posts, and their previews show a post's first line again): kept once."""


READINGS: Final = {
    Kind.ARTICLE: Reading(),
    Kind.FORUM: Reading(MANY_BLOCKS_WIDENING, posts=words("comment replies"), quotes_repeat=True),
    # A page of questions and answers calls the remarks under each of them comments: not posts.
    Kind.QUESTIONS: Reading(MANY_BLOCKS_WIDENING, quotes_repeat=True),
    Kind.PRODUCT: Reading(
        MANY_BLOCKS_WIDENING,
        # A shop's cart, reviews and "customers also bought" rails beside the product it sells.
        words(
            "cart minicart drawer reviews review ratings upsell upsells crosssell "
            "recommendations recommended recently wishlist similar carousel bundle notify"
        ),
        # A product's description is short, and its schema data makes up what the page lacks.
        enough=150,
        # The shop's cart drawn into the page as a form that edits it (the form that adds the
        # product to the cart is its buy box, judged as any other block is).
        furniture_selector=(
            'form[action$="/cart"],form[action*="/cart/update"],form[action*="/cart/change"]'
        ),
        # The blocks around a short description are mostly the shop's: the cleaning takes most.
        cleaning_may_take=1.0,
    ),
    Kind.LISTING: Reading(MANY_BLOCKS_WIDENING, clean_conditionally=False, main_link_density=1.0),
}
