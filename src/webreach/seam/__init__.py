"""The web seam: one provider-neutral contract for search, fetch and image search.

It imports nothing else of webreach. Providers register here; tools and the server call
``search()``/``fetch()``/``image_search()``.
"""

from typing import TYPE_CHECKING

from . import bot_walls, errors, hops, protocols, runtime, tasks, types
from .bot_walls import *
from .cache import CacheStore as CacheStore
from .cache import CounterStore as CounterStore
from .errors import *
from .hops import *
from .protocols import *
from .runtime import *
from .tasks import *
from .types import *

# The names are each module's own ``__all__``. mypy reads them through the star imports and takes
# a computed ``__all__`` for an empty one, so only the interpreter computes it.
if not TYPE_CHECKING:
    __all__ = [
        "CacheStore",
        "CounterStore",
        *bot_walls.__all__,
        *errors.__all__,
        *hops.__all__,
        *protocols.__all__,
        *runtime.__all__,
        *tasks.__all__,
        *types.__all__,
    ]
