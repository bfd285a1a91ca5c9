"""``image_search`` for the model: the pages that show an image the user attached.

Offered when the user's last message carries images, web search is ``deepseek_web_search``
and an image search provider is ready. The model names an image by its number; the pages found
are numbered sources of the round, like a search's, so 【n】 cites them too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....seam import ImageSearchRequest, WebError, WebRuntime, image_from_url
from ....tools import ToolError, ToolOptions, fence
from ..turn.events import Billing, CallFailed, Outcome, SearchAction, SearchOutcome, WebSource
from ..turn.operator_log import web_failure
from ..turn.shape import JSON, ForcedWeb, SearchSpec
from ..upstream.step import PendingCall
from ..wire.display import site_icon, site_name
from ..wire.framing import DEEPSEEK_SEARCH
from .base import SEARCH_BUDGET, Plan, Slot, SourceRegistry, ToolSetup, invalid_input, over_budget
from .search import CITE_WITH_MARKERS
from .tool import ModelTool, function_tool, json_object

__all__ = [
    "IMAGE_BILLING",
    "ImageSearch",
    "image_tool",
    "images_in",
    "parse_image_arguments",
    "run_image_call",
]


IMAGE_BILLING = Billing("web_search_requests", "tool_image_search")


def images_in(message: JSON | None) -> list[str]:
    """The image URLs (``data:`` URLs included) of a user message, in order."""
    content = message.get("content") if message is not None else None
    images: list[str] = []
    for part in content if isinstance(content, list) else ():
        image = part.get("image_url") if isinstance(part, dict) else None
        url = image.get("url") if isinstance(image, dict) else image
        if part.get("type") == "image_url" and isinstance(url, str) and url:
            images.append(url)
    return images


def image_tool(count: int, name: str = "image_search") -> ModelTool:
    which = "it is image 1" if count == 1 else f"they are numbered 1 to {count} in order"
    description = (
        "Find web pages that show an image the user attached to their last message "
        f"({which}): where it comes from, what or who it shows. Results are numbered "
        "sources; cite them as 【n】."
    )
    parameters = {
        "type": "object",
        "properties": {
            "image": {
                "type": "integer",
                "minimum": 1,
                "maximum": count,
                "description": "The number of the image to search for.",
            }
        },
        "required": ["image"],
        "additionalProperties": False,
    }
    return function_tool(name, description, parameters)


def parse_image_arguments(raw: str, count: int) -> int:
    """The image number of a call; ``ToolError`` unless it names one of the user's images."""
    value = json_object(raw).get("image", 1 if count == 1 else None)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= count:
        raise ToolError("INVALID_ARGUMENTS", f"`image` must be a number from 1 to {count}")
    return value


async def run_image_call(
    image: str, runtime: WebRuntime, options: ToolOptions, registry: SourceRegistry
) -> tuple[Outcome, str, int]:
    """One image search; returns the client-facing outcome, the model's text and 1 when it
    found pages (what is billed)."""
    try:
        request = ImageSearchRequest(image_from_url(image), max_results=options.search_max_results)
        result = await runtime.image_search(request)
    except WebError as error:
        web_failure("image_search", error)
        return CallFailed("unavailable"), f"The image search failed ({error.code}): {error}", 0
    numbered = tuple(
        registry.add(
            WebSource(
                url=match.url,
                title=match.title,
                snippet=match.snippet,
                published_at=None,
                number=0,
                site_name=site_name(match.url),
                site_icon=site_icon(match.url),
                image_url=match.image_url,
            )
        )
        for match in result.matches
    )
    if not numbered:
        return SearchOutcome(()), "The image search found no pages that show this image.", 0
    lines = [f"The image probably shows: {result.content}", ""] if result.content else []
    for source in numbered:
        lines.append(f"[{source.number}] {source.title or source.site_name or source.url}")
        lines.append(f"URL: {source.url}")
        if source.image_url:
            lines.append(f"Image on the page: {source.image_url}")
        if source.snippet:
            lines.append(source.snippet[:240])
        lines.append("")
    text = fence("\n".join(lines).strip(), source="image_search")
    return SearchOutcome(numbered), f"{text}\n\n{CITE_WITH_MARKERS}", 1


@dataclass(frozen=True, slots=True)
class ImageSearch:
    """``image_search``: offered beside ``deepseek_web_search`` when the user's last
    message has images and an image search provider is ready."""

    models: tuple[ModelTool, ...]
    declared: SearchSpec
    kind: str
    id_prefix: str
    images: tuple[str, ...]
    """The images of the user's last message, which calls name by number."""
    setup: ToolSetup
    budget: str = SEARCH_BUDGET
    billing: Billing = IMAGE_BILLING
    forced_as: ForcedWeb = None

    @classmethod
    def offer(cls, setup: ToolSetup) -> ImageSearch | None:
        spec = setup.turn.web.search
        if spec is None or spec.declared_type != DEEPSEEK_SEARCH:
            return None
        images = images_in(setup.last_user)
        if not images or not setup.context.runtime.image_search_ready():
            return None
        model = image_tool(len(images), setup.name("image_search", "webreach_image"))
        if setup.deep:
            return cls((model,), spec, "deep_image_search", "dis", tuple(images), setup)
        return cls((model,), spec, "image_search", "is", tuple(images), setup)

    def plan(self, call: PendingCall, slot: Slot) -> Plan:
        try:
            number = parse_image_arguments(call.arguments, len(self.images))
        except ToolError as error:
            return SearchAction(()), invalid_input(error)
        if not slot.within_budget:
            return SearchAction(()), over_budget("search")
        context = self.setup.context
        image = self.images[number - 1]
        work = run_image_call(image, context.runtime, context.options, self.setup.sources)
        return SearchAction(()), work
