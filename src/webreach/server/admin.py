"""``GET /admin/usage``: each inbound key's usage by name, for the operator alone.

Guarded by its own key (``WEBREACH_ADMIN_API_KEY``), not by the inbound keys: a tenant must not
read the others' usage.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .tenants import Tenants

__all__ = ["ADMIN_USAGE_PATH", "usage_endpoint"]

ADMIN_USAGE_PATH = "/admin/usage"


def usage_endpoint(
    tenants: Tenants, admin_key: SecretStr
) -> Callable[[Request], Awaitable[Response]]:
    expected = admin_key.get_secret_value().encode()

    async def usage(request: Request) -> Response:
        offered = request.headers.get("x-api-key", "")
        authorization = request.headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            offered = authorization[7:].strip()
        if not hmac.compare_digest(offered.encode(), expected):
            error = {"message": "invalid or missing admin key", "type": "invalid_request_error"}
            return JSONResponse({"error": error}, status_code=401)
        return JSONResponse({"keys": await tenants.usage()})

    return usage
