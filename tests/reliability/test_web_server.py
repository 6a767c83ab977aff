"""The web app's server against slow clients (8 connections sending nothing, or their
request a byte at a time, stayed open 45 s): each request must arrive within the read
timeout, else the connection is closed; and HTTPS with ``--ssl-certfile``/``--ssl-keyfile``.

The server runs in a thread on a free loopback port, as ``ragmeter serve`` runs it
(:func:`ragmeter.web.server.server_options`)."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")

import uvicorn
from typer.testing import CliRunner

from ragmeter.cli import app as cli
from ragmeter.errors import InputError
from ragmeter.web.app import create_app
from ragmeter.web.config import build_config
from ragmeter.web.server import check_tls, server_options
from webdata import config_kwargs, write_collection

TIMEOUT = 1.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(tmp: Path, **options: Any) -> Iterator[int]:
    paths = write_collection(tmp / "data")
    config = build_config(**config_kwargs(paths, tmp))  # type: ignore[arg-type]
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(config), **server_options(host="127.0.0.1", port=port, **options))
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web app did not start")
        time.sleep(0.05)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    yield from _serve(tmp_path, read_timeout=TIMEOUT)


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (reading what it sends)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def test_slow_clients_are_disconnected(port: int) -> None:
    silent = _connect(port)
    slow_headers = _connect(port)
    slow_headers.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never the blank line
    slow_body = _connect(port)
    slow_body.sendall(
        b"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"query_id"'
    )
    started = time.monotonic()
    for sock in (silent, slow_headers, slow_body):
        assert _closed_within(sock, TIMEOUT + 5), "a slow client kept its connection"
        sock.close()
    assert time.monotonic() - started < TIMEOUT + 5
    # a client that keeps sending a byte at a time is disconnected all the same
    dribbler = _connect(port)
    dribbler.settimeout(5)
    deadline = time.monotonic() + TIMEOUT + 5
    closed = False
    for byte in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000:
        try:
            dribbler.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
        time.sleep(0.05)
        if time.monotonic() > deadline:
            break
    closed = closed or _closed_within(dribbler, 1.0)
    dribbler.close()
    assert closed, "a client sending a byte at a time kept its connection"


def test_prompt_clients_are_served_on_a_kept_alive_connection(port: int) -> None:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    sockets = []
    for _ in range(2):  # the second request within the timeout of the first response
        connection.request("GET", "/static/app.css")
        reply = connection.getresponse()
        assert reply.status == 200 and reply.read()
        sockets.append(connection.sock)
        time.sleep(TIMEOUT / 2)
    assert sockets[0] is sockets[1]  # the same connection served both
    connection.close()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
        assert page.status == 200


# -- TLS -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (made by the openssl command)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes"),
            *("-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def test_https_with_a_certificate(certificate: tuple[Path, Path], tmp_path: Path) -> None:
    cert, key = certificate
    for port in _serve(tmp_path, ssl_certfile=cert, ssl_keyfile=key):
        context = ssl.create_default_context(cafile=str(cert))
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/", context=context) as page:
            assert page.status == 200
            assert "Secure" in page.headers["set-cookie"]  # the session cookie stays on TLS
        with pytest.raises(OSError):  # plain HTTP is not answered
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()


def test_bad_tls_files_are_named(certificate: tuple[Path, Path], tmp_path: Path) -> None:
    cert, key = certificate
    with pytest.raises(InputError, match="needs --ssl-certfile"):
        check_tls(None, key)
    with pytest.raises(InputError, match="no such file") as caught:
        check_tls(tmp_path / "gone.pem", None)
    assert caught.value.source == str(tmp_path / "gone.pem")
    with pytest.raises(InputError, match="cannot load the TLS certificate") as caught:
        check_tls(cert, cert)  # a certificate where the key should be
    assert caught.value.source == str(cert)
    check_tls(cert, key)


def test_serve_passes_the_options_to_uvicorn(
    certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    paths = write_collection(tmp_path / "data")
    seen: dict[str, Any] = {}
    # the port is bound before the address is printed, then served: neither for real here
    monkeypatch.setattr("ragmeter.web.server.listening_socket", lambda host, port: None)
    monkeypatch.setattr(
        "ragmeter.web.server.serve_app", lambda app, sock, options: seen.update(options)
    )
    args = ["serve", "--run", str(paths["run_a"]), "--labels", str(tmp_path / "l.db")]
    tls = ["--ssl-certfile", str(cert), "--ssl-keyfile", str(key), "--read-timeout", "7.5"]
    done = CliRunner().invoke(cli, [*args, "--host", "0.0.0.0", *tls])
    assert done.exit_code == 0, done.output
    assert seen["ssl_certfile"] == str(cert) and seen["ssl_keyfile"] == str(key)
    assert "open https://0.0.0.0:8765/?token=" in done.stderr
    assert seen["http"].__name__ == "ReadTimeoutProtocol"
    bad = CliRunner().invoke(cli, [*args, "--ssl-certfile", str(tmp_path / "gone.pem")])
    assert bad.exit_code == 2 and "gone.pem: no such file" in bad.stderr
    zero = CliRunner().invoke(cli, [*args, "--read-timeout", "0"])
    assert zero.exit_code == 2 and "read_timeout" in zero.stderr
