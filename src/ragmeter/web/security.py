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
  and an ``Origin`` header, when the browser sends one, must name this server.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
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


def host_name(header: str) -> str:
    """The host of a ``Host`` header, without the port and the IPv6 brackets, lower case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


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
