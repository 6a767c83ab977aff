"""Access token and CSRF protection of the web app (no web-stack import here).

* **Access token.** Bound to a loopback address, the app needs none (but accepts one). Bound
  anywhere else it refuses to start without one (``ragmeter serve`` generates and prints one
  when ``--token`` is not given). A request proves it knows the token by the ``token`` query
  parameter once (the app then sets an HttpOnly cookie and redirects to the same URL without
  it, so the token does not stay in the address bar or the history), by the cookie afterwards,
  or by an ``X-Ragmeter-Token`` header (scripts). Compared in constant time.
* **Host check.** Bound to loopback without a token, only requests naming a loopback host
  are served (no DNS rebinding).
* **CSRF.** Every browser gets a random session id in an HttpOnly, SameSite=Strict cookie;
  its CSRF token is ``HMAC-SHA256(secret, session id)``, the secret being kept in the label
  database (so open pages keep working across server restarts). Every state-changing request
  (POST) must carry the token in the ``csrf_token`` form field or the ``X-CSRF-Token`` header,
  and an ``Origin`` header, when the browser sends one, must name this server: its scheme,
  host and port (``null`` and ``https://…`` for an http server are refused).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets

SESSION_COOKIE = "ragmeter_session"
TOKEN_COOKIE = "ragmeter_token"
ANNOTATOR_COOKIE = "ragmeter_annotator"
TOKEN_HEADER = "x-ragmeter-token"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is reachable only from this machine."""
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


#: the names a browser uses for this machine's loopback interface
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


#: ``host[:port]`` or ``[v6]:port``: the port is ASCII digits, nothing else
_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[^:\[\]]+))(?::(?P<port>[0-9]{1,5}))?")
#: the port a scheme implies when none is given
DEFAULT_PORTS = {"http": 80, "https": 443}


def split_host(header: str) -> tuple[str, int | None] | None:
    """The host (lower case, without IPv6 brackets) and the port of a ``Host`` header;
    ``None`` when it is not ``host[:port]`` with a port of digits (``localhost:8765.evil``
    is not ``localhost``)."""
    match = _HOST.fullmatch(header.strip().lower())
    if match is None:
        return None
    port = match["port"]
    return match["v6"] or match["name"], int(port) if port else None


def host_name(header: str) -> str:
    """The host of a ``Host`` header, without the port and the IPv6 brackets, lower case; a
    malformed header comes back whole (it names no host a server allows)."""
    parts = split_host(header)
    return parts[0] if parts is not None else header.strip().lower()


def same_origin(origin: str, scheme: str, host_header: str) -> bool:
    """Whether an ``Origin`` header names this server: the request's scheme, and the host and
    port of its ``Host`` header (default ports filled in). ``null`` (a sandboxed frame, a
    ``file:`` page) is no origin of this server."""
    scheme = scheme.lower()
    given_scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or given_scheme != scheme or given_scheme not in DEFAULT_PORTS:
        return False
    given, ours = split_host(rest), split_host(host_header)
    if given is None or ours is None:
        return False
    default = DEFAULT_PORTS[scheme]
    return given[0] == ours[0] and (given[1] or default) == (ours[1] or default)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def new_session_id() -> str:
    return secrets.token_urlsafe(24)


def csrf_token(secret: str, session_id: str) -> str:
    """The CSRF token of a session: HMAC-SHA256 of its id under the server's secret."""
    return hmac.new(secret.encode(), session_id.encode(), hashlib.sha256).hexdigest()


def csrf_valid(secret: str, session_id: str | None, token: str | None) -> bool:
    if not session_id or not token:
        return False
    return hmac.compare_digest(csrf_token(secret, session_id), token)


def token_valid(expected: str | None, given: str | None) -> bool:
    """No token configured: everyone; otherwise the exact token (constant time)."""
    if expected is None:
        return True
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


#: what may stand in the plain ``filename="…"`` of a download header (RFC 6266's fallback)
_PLAIN_FILENAME = re.compile(r"[^A-Za-z0-9._-]")


def attachment(filename: str) -> str:
    """The ``Content-Disposition`` value of a download named ``filename`` (RFC 6266): a
    plain ASCII ``filename`` (every other character ``_``, so that no quote, semicolon or
    line break of a name can end the value or add a parameter) and, when that is not the
    name, the exact name as ``filename*=UTF-8''…`` percent-encoded (RFC 8187), which
    browsers prefer."""
    from urllib.parse import quote

    plain = _PLAIN_FILENAME.sub("_", filename) or "download"
    if plain == filename:  # nothing to spell out
        return f'attachment; filename="{plain}"'
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(filename, safe='')}"
