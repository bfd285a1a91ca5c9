"""A TCP relay on 127.0.0.1 that a test can cut: every connection through it closes at once, as
when a proxy or a flaky network drops a long-lived stream. Bytes are relayed as they are, never
parsed; what each direction carried is kept for the test to look at."""

from __future__ import annotations

import contextlib
import socket
import threading

__all__ = ["CuttingProxy"]


class CuttingProxy:
    """Relays ``127.0.0.1:<port>`` to ``127.0.0.1:target``; ``cut()`` ends every open connection
    (new ones are relayed as before)."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.to_server = bytearray()
        self.to_client = bytearray()
        self.cuts = 0
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            with self._lock:
                self._open += [client, server]
            for source, sink, seen in (
                (client, server, self.to_server),
                (server, client, self.to_client),
            ):
                threading.Thread(target=self._pump, args=(source, sink, seen), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, seen: bytearray) -> None:
        try:
            while chunk := source.recv(65536):
                with self._lock:
                    seen += chunk
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Close every connection now: the client reads what it was sent, then the end."""
        self.cuts += 1
        self._close_all()

    def _close_all(self) -> None:
        with self._lock:
            ends, self._open = self._open, []
        for end in ends:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self._listener.close()
        self._close_all()

    def __enter__(self) -> CuttingProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
