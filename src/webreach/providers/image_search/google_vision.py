"""Google Cloud Vision web detection: ``POST {base}/v1/images:annotate`` with ``WEB_DETECTION``;
matches are the ``pagesWithMatchingImages[]``. It takes an image URL or the image's bytes."""

from __future__ import annotations

import base64
from typing import Any, assert_never

from ...seam import (
    ImageBytes,
    ImageMatch,
    ImageSearchProvider,
    ImageSearchRequest,
    ImageSearchResult,
    ImageUrl,
    WebError,
    WebErrorCode,
)
from .._google import google_key_refused
from .._json_api import field, optional_field, optional_str
from .._plain_text import optional_text
from ..spec import BaseUrl, ProviderContext, ProviderSettings, ProviderSpec, Secret, secret
from ._matches import KeyedImageProvider, unique

__all__ = ["MAX_IMAGE_BYTES", "PROVIDER", "GoogleVisionImageSearchProvider", "GoogleVisionSettings"]

MAX_IMAGE_BYTES = 7 * 1024 * 1024
"""The largest image sent as bytes: Vision takes JSON requests up to 10 MB, and base64 makes
the image a third larger."""


class GoogleVisionImageSearchProvider(KeyedImageProvider):
    """Available with an API key, sent in the ``X-Goog-Api-Key`` header."""

    id = "google_vision"
    default_base_url = "https://vision.googleapis.com"

    async def image_search(self, request: ImageSearchRequest) -> ImageSearchResult:
        feature: dict[str, Any] = {"type": "WEB_DETECTION"}
        if request.max_results is not None:
            feature["maxResults"] = request.max_results
        body = {"requests": [{"image": self._image(request), "features": [feature]}]}
        data = await self._call(
            "POST",
            "/v1/images:annotate",
            headers={"X-Goog-Api-Key": self._api_key or ""},
            json_body=body,
            key_refused=google_key_refused,
        )
        # One request, so one response: its error, or its detection (absent: nothing found).
        responses = field(self.id, data, "responses", list)
        answer = responses[0] if responses else None
        if not isinstance(answer, dict):
            raise WebError(
                WebErrorCode.WEB_PROVIDER_ERROR,
                f"{self.id}: unexpected response shape (no answer in 'responses')",
                provider=self.id,
            )
        error = optional_field(self.id, answer, "error", dict, {})
        if error:
            # The per-image error of a 200 answer: an image Vision could not fetch or decode.
            raise self._failed("the image could not be searched", error.get("message"))
        detection = optional_field(self.id, answer, "webDetection", dict, {})
        pages = optional_field(self.id, detection, "pagesWithMatchingImages", list, [])
        return ImageSearchResult(
            matches=unique(_match(page) for page in pages), content=_best_guess(detection)
        )

    def _image(self, request: ImageSearchRequest) -> dict[str, Any]:
        match request.image:
            case ImageUrl(url=url):
                return {"source": {"imageUri": url}}
            case ImageBytes(data=data):
                if len(data) > MAX_IMAGE_BYTES:
                    raise WebError(
                        WebErrorCode.WEB_PROVIDER_ERROR,
                        f"{self.id}: the image is too large to send "
                        f"({len(data) / 2**20:.1f} MiB; at most {MAX_IMAGE_BYTES // 2**20} MiB "
                        "as bytes, or give its URL)",
                        provider=self.id,
                    )
                return {"content": base64.b64encode(data).decode("ascii")}
            case _:
                assert_never(request.image)


def _match(page: Any) -> ImageMatch | None:
    if not isinstance(page, dict) or not (url := optional_str(page, "url")):
        return None
    return ImageMatch(
        url=url,
        title=optional_text(page, "pageTitle"),  # may carry <b> highlighting
        image_url=_first_image(page, "fullMatchingImages")
        or _first_image(page, "partialMatchingImages"),
    )


def _first_image(page: dict[str, Any], key: str) -> str | None:
    images = page.get(key)
    for image in images if isinstance(images, list) else ():
        if isinstance(image, dict) and (url := optional_str(image, "url")):
            return url
    return None


def _best_guess(detection: dict[str, Any]) -> str | None:
    """The service's best-guess labels for the image ("eiffel tower"), when it has any."""
    labels = detection.get("bestGuessLabels")
    texts = (
        [optional_text(label, "label") for label in labels if isinstance(label, dict)]
        if isinstance(labels, list)
        else []
    )
    return ", ".join(text for text in texts if text) or None


class GoogleVisionSettings(ProviderSettings):
    """``GOOGLE_VISION_API_KEY`` (a Google Cloud API key with the Cloud Vision API enabled), and
    ``GOOGLE_VISION_BASE_URL`` to use another endpoint than the official one."""

    google_vision_api_key: Secret = None
    google_vision_base_url: BaseUrl = None


def _create(
    settings: GoogleVisionSettings, context: ProviderContext
) -> GoogleVisionImageSearchProvider:
    return GoogleVisionImageSearchProvider(
        api_key=secret(settings.google_vision_api_key),
        base_url=settings.google_vision_base_url,
        client=context.client,
    )


PROVIDER: ProviderSpec[GoogleVisionSettings, ImageSearchProvider] = ProviderSpec(
    "google_vision", GoogleVisionSettings, _create
)
