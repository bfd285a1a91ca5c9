"""Local HTTP servers on 127.0.0.1 for fetch tests, built on raw asyncio streams.

Raw streams (rather than a framework) let a test misbehave on purpose: drip bytes, lie about
lengths, stream a gigabyte, or notice exactly when the client hangs up.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ssl
import tempfile
import zlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Exchange",
    "LocalServer",
    "Request",
    "gzip_bomb",
    "make_pdf",
    "respond",
    "tls_contexts",
]


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]


@dataclass
class Exchange:
    """One request on one connection, handed to a route."""

    request: Request
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    keep_alive: bool = True

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()


Route = Callable[[Exchange], Awaitable[None]]


async def respond(
    exchange: Exchange,
    status: int = 200,
    body: bytes = b"",
    headers: Mapping[str, str] | None = None,
    *,
    close: bool = False,
) -> None:
    """Send a complete response with a Content-Length (unless the headers give one)."""
    lines = [f"HTTP/1.1 {status} X"]
    given = {k.lower() for k in (headers or {})}
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if "content-length" not in given and "transfer-encoding" not in given:
        lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
        exchange.keep_alive = False
    await exchange.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)


@dataclass
class LocalServer:
    """An HTTP/1.1 server on 127.0.0.1 in the test's event loop, routing by path.

    It counts accepted connections and records requests, so a test can prove that nothing
    reached it, and ``disconnected`` is set whenever a client connection ends.
    """

    routes: dict[str, Route] = field(default_factory=dict)
    connections: int = 0
    requests: list[Request] = field(default_factory=list)
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    port: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    tls: ssl.SSLContext | None = None

    async def __aenter__(self) -> LocalServer:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0, ssl=self.tls)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                exchange = Exchange(request, reader, writer)
                route = self.routes.get(request.target.split("?", 1)[0], _not_found)
                await route(exchange)
                if not exchange.keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Server shutdown: end quietly (asyncio.start_server logs a cancelled handler task).
            pass
        finally:
            self.disconnected.set()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._tasks.discard(task)


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, target, _ = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return Request(method, target, headers)


async def _not_found(exchange: Exchange) -> None:
    await respond(exchange, 404, b"not found", {"Content-Type": "text/plain"})


def gzip_bomb(decoded_size: int, fill: bytes = b"a") -> bytes:
    """A gzip stream of ``decoded_size`` repeated bytes (about 1000:1), built without holding it."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = fill * (1024 * 1024)
    parts = [compressor.compress(block) for _ in range(decoded_size // len(block))]
    parts.append(compressor.flush())
    return b"".join(parts)


def make_pdf(pages: list[str], *, blank_pages: int = 0) -> bytes:
    """A valid PDF by hand: one Helvetica text page per string, then drawn-only pages."""
    contents: list[bytes] = []
    for text in pages:
        shown = []
        for i, line in enumerate(text.splitlines()):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            shown.append(f"1 0 0 1 72 {720 - 14 * i} Tm ({escaped}) Tj")
        contents.append(("BT /F1 12 Tf\n" + "\n".join(shown) + "\nET").encode("cp1252"))
    contents += [b"0.5 g 72 72 200 200 re f"] * blank_pages
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(contents)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(contents)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for i, stream in enumerate(contents):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
            "/Resources << /Font << /F1 3 0 R >> >> >>".encode()
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def tls_contexts(hostname: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a self-signed certificate for ``hostname``, and a client context
    that trusts exactly that certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = certificate.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    with tempfile.TemporaryDirectory() as directory:
        cert_file, key_file = Path(directory, "cert.pem"), Path(directory, "key.pem")
        cert_file.write_bytes(cert_pem)
        key_file.write_bytes(key_pem)
        server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cadata=cert_pem.decode("ascii"))
    return server, client
