"""Which HTTP requests the Bridge takes at all, decided from their headers before any body is read.

The Bridge serves programs (Parley's adapter), never web pages. A browser lets any site send a "simple"
cross-site POST (``text/plain``, no CORS preflight) to a loopback port, and DNS rebinding lets a site's
scripts reach it under the site's own host name. So, whatever the route:

- a request carrying ``Origin`` comes from a web page: ``403 ORIGIN_NOT_ALLOWED``;
- without a token, a ``Host`` that is not a loopback name or address (``localhost``, ``127.0.0.0/8``,
  ``[::1]``, with an optional port) is a rebound name: ``403 HOST_NOT_ALLOWED``;
- a ``POST`` whose ``Content-Type`` is not ``application/json`` (a browser can send ``text/plain`` without
  asking): ``415 UNSUPPORTED_MEDIA_TYPE``.
"""

from __future__ import annotations

import ipaddress
import re
from email.message import Message

from .errors import BridgeError

_PORT = re.compile(r"^:\d{1,5}$")


def check_request(headers: Message, method: str, token_required: bool) -> None:
    """Raises the refusal for a request no web page may make (see the module); returns if it may go on."""
    if headers.get("Origin") is not None:
        raise BridgeError(403, "ORIGIN_NOT_ALLOWED",
                          "the Bridge takes no requests from web pages (the request carries an Origin header)")
    if not token_required and not is_loopback_host(headers.get("Host")):
        raise BridgeError(403, "HOST_NOT_ALLOWED",
                          "a Bridge without a token answers only requests addressed to a loopback name or address"
                          " (Host: localhost, 127.0.0.1 or [::1])")
    if method == "POST" and not is_json(headers.get("Content-Type")):
        raise BridgeError(415, "UNSUPPORTED_MEDIA_TYPE", "a POST must have the Content-Type application/json")


def is_loopback_host(value: str | None) -> bool:
    """True for a ``Host`` header naming this machine's loopback: ``localhost``, ``127.x.y.z``, ``[::1]``."""
    if not value:
        return False
    host = value.strip()
    if host.startswith("["):
        end = host.find("]")
        if end < 0 or (host[end + 1:] and not _PORT.match(host[end + 1:])):
            return False
        name = host[1:end]
    else:
        name, colon, port = host.partition(":")
        if colon and not _PORT.match(colon + port):
            return False
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_json(content_type: str | None) -> bool:
    """True for ``application/json``, with or without parameters (``; charset=utf-8``)."""
    if not content_type:
        return False
    return content_type.split(";", 1)[0].strip().lower() == "application/json"
