"""The web app's HTTP server: uvicorn, with a read timeout for slow clients and, when given a
certificate, TLS (needs the ``web`` extra).

* **Read timeout.** uvicorn closes a connection idle after a response (keep-alive timeout),
  but not one that never completes its request: a client that sends its headers a byte at a
  time, or nothing at all, holds its connection (and a file descriptor) as long as it likes.
  Here each request, headers and body, must arrive within ``read_timeout`` seconds of the
  connection opening or of the previous response; a connection that has not sent a whole
  request by then is closed. The time the app takes to answer is not limited.
* **TLS.** ``ssl_certfile`` (and ``ssl_keyfile`` when the key is in its own file) serve
  HTTPS, so that the access token does not cross the network in clear. Both are checked
  before the server starts: a missing file or a key that does not match is an error naming
  the file.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError, RagmeterError

#: seconds a client has to send a whole request (nginx waits 60 s for headers, 60 s between
#: two reads of the body; a labelling page sends a few kilobytes)
DEFAULT_READ_TIMEOUT = 30.0


def check_tls(certfile: Path | None, keyfile: Path | None) -> None:
    """Refuse a key without a certificate, a missing or unreadable file, and a certificate
    and key that do not load together (the error names the file)."""
    if certfile is None:
        if keyfile is not None:
            raise InputError("--ssl-keyfile needs --ssl-certfile", source=str(keyfile))
        return
    for path in (certfile, keyfile):
        if path is not None and not path.is_file():
            raise InputError("no such file", source=str(path))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(certfile, keyfile)
    except (ssl.SSLError, OSError) as exc:
        source = str(keyfile if keyfile is not None else certfile)
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        raise InputError(
            f"cannot load the TLS certificate {certfile} with its key: {reason}; expected "
            "PEM files (the key unencrypted)",
            source=source,
        ) from None


def timed_protocol(read_timeout: float) -> type[Any]:
    """uvicorn's h11 protocol closing a connection that does not send a whole request within
    ``read_timeout`` seconds (see the module docstring)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting = (h11.IDLE, h11.SEND_BODY)  # the client has not finished sending its request

    class ReadTimeoutProtocol(H11Protocol):  # type: ignore[misc]
        _read_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state not in waiting:
                self._disarm()  # the request is in: the app's time is not limited

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request has the same time

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._read_timer = self.loop.call_later(read_timeout, self._timed_out)

        def _disarm(self) -> None:
            if self._read_timer is not None:
                self._read_timer.cancel()
                self._read_timer = None

        def _timed_out(self) -> None:
            self._read_timer = None
            if self.conn.their_state in waiting and not self.transport.is_closing():
                self.transport.close()

    return ReadTimeoutProtocol


def server_options(
    *,
    host: str,
    port: int,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    ssl_certfile: Path | None = None,
    ssl_keyfile: Path | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.run`` (``uvicorn.Config``) for the web app."""
    if not read_timeout > 0:
        raise InputError(f"must be > 0 seconds, got {read_timeout}", field="read_timeout")
    check_tls(ssl_certfile, ssl_keyfile)
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "http": timed_protocol(read_timeout),
    }
    if ssl_certfile is not None:
        options["ssl_certfile"] = str(ssl_certfile)
        if ssl_keyfile is not None:
            options["ssl_keyfile"] = str(ssl_keyfile)
    return options


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, taken before the address is printed and handed to
    uvicorn (``Server.run(sockets=…)``): a port another server holds is one clear error
    here, not uvicorn's own after an ``open http://…`` that points at the other server.

    Raises:
        RagmeterError: the port is in use, or the address cannot be bound.
    """
    if not 0 <= port <= 65535:
        raise RagmeterError(f"--port {port}: expected a port number 0..65535")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise RagmeterError(f"--host {host!r}: cannot listen there ({exc})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    # as uvicorn binds: a port in TIME_WAIT after a restart is free, one listened on is not
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise RagmeterError(
                f"port {port} on {host} is in use (another server is listening there): "
                "stop it or choose another --port"
            ) from None
        raise RagmeterError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


def serve_app(app: Any, sock: socket.socket, options: dict[str, Any]) -> None:
    """Serve ``app`` on the bound ``sock`` with uvicorn (``options``: :func:`server_options`)
    until interrupted."""
    import uvicorn

    with sock:
        uvicorn.Server(uvicorn.Config(app, **options)).run(sockets=[sock])


__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "check_tls",
    "listening_socket",
    "serve_app",
    "server_options",
    "timed_protocol",
]
