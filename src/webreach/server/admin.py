"""The operator's endpoints: ``GET /admin/usage`` (each inbound key's usage by name) and, when
an admin key is set, ``GET /metrics``.

Guarded by their own key (``WEBREACH_ADMIN_API_KEY``), not by the inbound keys: a tenant must not
read the others' names and usage.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .tenants import Tenants

__all__ = ["ADMIN_USAGE_PATH", "admin_only", "usage_endpoint"]

ADMIN_USAGE_PATH = "/admin/usage"
Endpoint = Callable[[Request], Awaitable[Response]]


def admin_only(endpoint: Endpoint, admin_key: SecretStr) -> Endpoint:
    """``endpoint`` for requests that carry the admin key (``Authorization: Bearer`` or
    ``x-api-key``); any other gets 401."""
    expected = admin_key.get_secret_value().encode()

    async def guarded(request: Request) -> Response:
        offered = request.headers.get("x-api-key", "")
        authorization = request.headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            offered = authorization[7:].strip()
        if not hmac.compare_digest(offered.encode(), expected):
            error = {"message": "invalid or missing admin key", "type": "invalid_request_error"}
            return JSONResponse({"error": error}, status_code=401)
        return await endpoint(request)

    return guarded


def usage_endpoint(tenants: Tenants, admin_key: SecretStr) -> Endpoint:
    async def usage(request: Request) -> Response:
        return JSONResponse({"keys": await tenants.usage()})

    return admin_only(usage, admin_key)
