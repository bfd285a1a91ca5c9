"""Replies of the reverse image search services, shaped on their documentation, for the replay
server: SerpApi's Google Lens API (``visual_matches``; ``search_metadata.status``; ``error``)
and Cloud Vision's ``images:annotate`` with ``WEB_DETECTION`` (``pagesWithMatchingImages``)."""

from __future__ import annotations

from typing import Any

IMAGE_URL = "https://upload.wikimedia.org/wikipedia/commons/a/a8/Tour_Eiffel_Wikimedia_Commons.jpg"

LENS_METADATA = {
    "id": "6650e1f6c8b4a2f1d3e5a7b9",
    "status": "Success",
    "json_endpoint": "https://serpapi.com/searches/3c1e1b2f5a4d/6650e1f6c8b4a2f1d3e5a7b9.json",
    "created_at": "2025-05-24 18:42:30 UTC",
    "processed_at": "2025-05-24 18:42:30 UTC",
    "google_lens_url": "https://lens.google.com/uploadbyurl?url=https%3A%2F%2Fupload.wikimedia.org",
    "raw_html_file": "https://serpapi.com/searches/3c1e1b2f5a4d/6650e1f6c8b4a2f1d3e5a7b9.html",
    "total_time_taken": 3.21,
}

LENS_RESPONSE: dict[str, Any] = {
    "search_metadata": LENS_METADATA,
    "search_parameters": {"engine": "google_lens", "url": IMAGE_URL, "hl": "en"},
    "visual_matches": [
        {
            "position": 1,
            "title": "Eiffel Tower - Wikipedia",
            "link": "https://en.wikipedia.org/wiki/Eiffel_Tower",
            "source": "Wikipedia",
            "source_icon": "https://encrypted-tbn3.gstatic.com/favicon-tbn?q=tbn:ANd9GcQ",
            "thumbnail": "https://encrypted-tbn1.gstatic.com/images?q=tbn:ANd9GcR1",
            "thumbnail_width": 183,
            "thumbnail_height": 275,
            "image": "https://upload.wikimedia.org/wikipedia/commons/8/85/Tour_Eiffel.jpg",
            "image_width": 1200,
            "image_height": 1800,
        },
        {
            "position": 2,
            "title": "Tour Eiffel &amp; Champ de Mars",
            "link": "https://www.toureiffel.paris/en",
            "source": "La tour Eiffel",
            "thumbnail": "https://encrypted-tbn2.gstatic.com/images?q=tbn:ANd9GcR2",
            "image": "https://www.toureiffel.paris/themes/custom/tour_eiffel/img/te.jpg",
            "price": {"value": "$29.40*", "extracted_value": 29.4, "currency": "$"},
            "in_stock": True,
        },
        {
            "position": 3,
            "title": "Eiffel Tower - Wikipedia (again)",
            "link": "https://en.wikipedia.org/wiki/Eiffel_Tower",
            "source": "Wikipedia",
        },
        {"position": 4, "title": "a match without a page", "source": "Pinterest"},
        {"position": 5, "link": "https://www.britannica.com/topic/Eiffel-Tower-Paris-France"},
    ],
    "related_content": [
        {
            "query": "Eiffel Tower",
            "link": "https://www.google.com/search?q=Eiffel+Tower",
            "thumbnail": "https://serpapi.com/searches/3c1e1b2f5a4d/images/related.jpeg",
        }
    ],
}

LENS_NO_RESULTS: dict[str, Any] = {
    "search_metadata": LENS_METADATA,
    "search_parameters": {"engine": "google_lens", "url": IMAGE_URL},
    "error": "Google Lens hasn't returned any results for this query.",
}

LENS_FAILED: dict[str, Any] = {
    "search_metadata": {**LENS_METADATA, "status": "Error"},
    "error": "We couldn't get valid results for this search. Please try again later.",
}

LENS_BAD_KEY = {
    "error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"
}
LENS_OUT_OF_SEARCHES = {"error": "Your account has run out of searches."}

VISION_RESPONSE: dict[str, Any] = {
    "responses": [
        {
            "webDetection": {
                "webEntities": [
                    {"entityId": "/m/02j81", "score": 14.2, "description": "Eiffel Tower"},
                    {"entityId": "/m/05qtj", "score": 1.1, "description": "Paris"},
                ],
                "fullMatchingImages": [
                    {"url": "https://upload.wikimedia.org/wikipedia/commons/8/85/Tour_Eiffel.jpg"}
                ],
                "partialMatchingImages": [{"url": "https://cdn.example/eiffel-crop.jpg"}],
                "pagesWithMatchingImages": [
                    {
                        "url": "https://en.wikipedia.org/wiki/Eiffel_Tower",
                        "pageTitle": "<b>Eiffel Tower</b> - Wikipedia",
                        "fullMatchingImages": [
                            {
                                "url": "https://upload.wikimedia.org/wikipedia/commons/8/85/"
                                "Tour_Eiffel.jpg"
                            }
                        ],
                    },
                    {
                        "url": "https://www.toureiffel.paris/en",
                        "pageTitle": "Official website | <b>Eiffel Tower</b> &amp; more",
                        "partialMatchingImages": [{"url": "https://www.toureiffel.paris/te.jpg"}],
                    },
                    {"url": "https://travel.example/paris", "pageTitle": "   "},
                    {"url": "https://en.wikipedia.org/wiki/Eiffel_Tower", "pageTitle": "dup"},
                    {"pageTitle": "no url"},
                ],
                "visuallySimilarImages": [{"url": "https://similar.example/tower.jpg"}],
                "bestGuessLabels": [{"label": "eiffel tower", "languageCode": "en"}],
            }
        }
    ]
}

VISION_NOTHING_FOUND: dict[str, Any] = {"responses": [{"webDetection": {}}]}

VISION_IMAGE_ERROR: dict[str, Any] = {
    "responses": [
        {
            "error": {
                "code": 7,
                "message": "We can not access the URL currently. Please download the content "
                "and pass it in.",
            }
        }
    ]
}


def google_error(code: int, status: str, message: str, reason: str) -> dict[str, Any]:
    """The error body of Google APIs (``google.rpc.Status`` with an ``ErrorInfo`` detail)."""
    return {
        "error": {
            "code": code,
            "message": message,
            "status": status,
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": reason,
                    "domain": "googleapis.com",
                    "metadata": {"service": "vision.googleapis.com"},
                }
            ],
        }
    }


VISION_BAD_KEY = google_error(
    400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID"
)
VISION_QUOTA = google_error(
    429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Requests'.", "RATE_LIMIT_EXCEEDED"
)
