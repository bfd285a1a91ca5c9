"""What the keyed HTTP search providers share: a key, a client, an endpoint, and their spec.

The endpoint and its request helper (errors, redaction) are :mod:`webreach.providers._json_api`'s,
shared with the image search providers."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ...seam import (
    SearchFilter,
    SearchProvider,
    SearchRequest,
    SearchResult,
    WebError,
    WebErrorCode,
)
from .._json_api import KeyedEndpoint, optional_str, redact
from ..spec import ProviderContext, ProviderSettings, ProviderSpec, secret

if TYPE_CHECKING:
    import httpx

__all__ = ["KeyedProvider", "ModelProvider", "keyed_spec", "model_failed", "own_key_spec"]


class KeyedProvider(KeyedEndpoint, ABC):
    """A search service at a keyed endpoint, whose key may be a general one other programs use."""

    filters: ClassVar[frozenset[SearchFilter]] = frozenset()
    """The request filters its API applies (see ``seam.SearchProvider``)."""

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str | None = None,
        shared: bool = False,
    ) -> None:
        super().__init__(api_key=api_key, client=client, base_url=base_url)
        self._shared = shared

    def shared_credential(self) -> bool:
        """Whether its key is a general model key other programs use too (``OPENAI_API_KEY``
        rather than ``OPENAI_SEARCH_API_KEY``): see ``seam.SharedCredential``."""
        return self._shared and self.available()

    @abstractmethod
    async def search(self, request: SearchRequest) -> SearchResult: ...


class ModelProvider(KeyedProvider):
    """A provider whose searches a model runs and answers; ``model`` picks it."""

    default_model: ClassVar[str]
    model_setting: ClassVar[str]
    """The settings field that names the model (``perplexity_model``, say)."""

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str | None = None,
        model: str | None = None,
        shared: bool = False,
    ) -> None:
        super().__init__(api_key=api_key, client=client, base_url=base_url, shared=shared)
        self._model = model or self.default_model

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._base_url!r}, model={self._model!r})"

    def call_timeout(self) -> float | None:
        """Its client's timeout, for the whole call (see ``seam.CallTimeout``): a model writes
        the answer, which takes far longer than the index lookups' search timeout allows."""
        return self._client.timeout.read

    def cache_scope(self) -> str:
        """The endpoint and the model: another model writes another answer."""
        return json.dumps(
            {"base_url": self._base_url, "model": self._model},
            sort_keys=True,
            separators=(",", ":"),
        )

    async def _post_model(self, path: str, headers: Mapping[str, str], body: Any) -> Any:
        """A POST whose 404 names the likely cause: a model name the service does not know."""
        try:
            return await self._call("POST", path, headers=headers, json_body=body)
        except WebError as error:
            if error.status == 404:
                raise WebError(
                    WebErrorCode.WEB_PROVIDER_ERROR,
                    f"{self.id}: web search returned 404 (model or endpoint not found)",
                    provider=self.id,
                    status=404,
                ) from None
            raise


S = TypeVar("S", bound=ProviderSettings)


def keyed_spec(provider: type[KeyedProvider], settings: type[S]) -> ProviderSpec[S, SearchProvider]:
    """The spec of a provider whose settings are named after it: ``<id>_api_key``,
    ``<id>_base_url``, and for a model-backed one the field its ``model_setting`` names."""
    pid = provider.id

    def create(values: S, context: ProviderContext) -> KeyedProvider:
        key = secret(getattr(values, f"{pid}_api_key"))
        base_url = getattr(values, f"{pid}_base_url")
        if issubclass(provider, ModelProvider):
            model = getattr(values, provider.model_setting)
            return provider(
                api_key=key, client=context.model_client, base_url=base_url, model=model
            )
        return provider(api_key=key, client=context.client, base_url=base_url)

    return ProviderSpec(pid, settings, create)


M = TypeVar("M", bound=ModelProvider)


def own_key_spec(
    provider: type[M], settings: type[S], *, shared_keys: Sequence[str], base_urls: Sequence[str]
) -> ProviderSpec[S, M]:
    """The spec of a model provider with a search key of its own (``<id>_search_api_key``)
    that wins over general model keys other programs use too (``shared_keys``, the first set
    wins, and marks the provider shared); the first set of ``base_urls`` is its endpoint."""

    def create(values: S, context: ProviderContext) -> M:
        own = secret(getattr(values, f"{provider.id}_search_api_key"))
        shared = next(filter(None, (secret(getattr(values, k)) for k in shared_keys)), None)
        return provider(
            api_key=own or shared,
            client=context.model_client,
            base_url=next(filter(None, (getattr(values, u) for u in base_urls)), None),
            model=getattr(values, provider.model_setting),
            shared=own is None,
        )

    return ProviderSpec(provider.id, settings, create)


def model_failed(
    pid: str, detail: dict[str, Any], code_key: str, unnamed: str, secrets: Iterable[str | None]
) -> WebError:
    """A model that failed after it began answering (an HTTP 200 with an error body): its
    error's code (``unnamed`` when it gave none) and message, the keys redacted."""
    code = optional_str(detail, code_key) or unnamed
    message = optional_str(detail, "message")
    text = f"{code}: {message}" if message else code
    return WebError(
        WebErrorCode.WEB_PROVIDER_ERROR,
        f"{pid}: the model failed to answer ({redact(text, secrets)})",
        provider=pid,
    )
