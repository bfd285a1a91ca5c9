"""Pages read whole in worker processes: each worker holds a fetch runtime of its own, built from
the same settings, and runs a search's page reads (the fetch, the app-shell check and the render)
on its own event loop, so a wave of searches reads on every core and the server's loop only
streams.

The workers start in the background on the first read (reads run in the owner meanwhile) and the
runtime they are attached to closes them. A read the caller gives up is cancelled in its worker; a
worker that dies fails its reads (their pages keep their snippets) and the next read starts
another.
"""

from .pool import ReadPool, WorkerLost, attach_read_pool, runtime_read_pool
from .worker import cpu_turn

__all__ = ["ReadPool", "WorkerLost", "attach_read_pool", "cpu_turn", "runtime_read_pool"]
