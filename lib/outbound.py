"""Outbound HTTP to addresses a Memory's policy names (webhooks): https to public addresses only.

A webhook URL is checked twice. When it is saved, :func:`url_problem` refuses anything but
``https://`` with a host, names that are local by definition (``localhost``, ``*.local``,
``*.internal``…), address literals that are not globally routable, and names that resolve to
such addresses. When it is used, :func:`post_json` resolves the name again (DNS can change after
the check), refuses unless *every* address is public, and connects to the very address it
checked — TLS still verifies the certificate against the host name — so a rebinding resolver
cannot swap the address between check and connect. Redirects are not followed.

"Public" is :attr:`ipaddress.IPv4Address.is_global`: no loopback, private, link-local
(169.254.0.0/16: cloud metadata), shared, reserved, multicast or unspecified address; IPv6 the
same, with IPv4-mapped addresses judged as their IPv4 address.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from urllib.parse import urlsplit

# The network boundary, named so tests can stand in for DNS and sockets without touching the
# process-wide socket module.
getaddrinfo = socket.getaddrinfo
create_connection = socket.create_connection

LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".intranet")


class UnsafeDestination(Exception):
    """The URL is not https, or its host is (or resolves to) a non-public address."""


class Unresolvable(UnsafeDestination):
    """The host name does not resolve (refused at send time, tolerated when saved)."""


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(ip.is_global) and not ip.is_multicast


def _split(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise UnsafeDestination("Only https:// URLs are allowed.")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise UnsafeDestination("The URL has no host.")
    try:
        port = parts.port or 443
    except ValueError as exc:
        raise UnsafeDestination("The URL's port is invalid.") from exc
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return host, port, path


def _literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


def resolve_public(host: str, port: int) -> str:
    """One public address of ``host``; refuses when any of its addresses is not public or it
    does not resolve."""
    literal = _literal(host)
    if literal is not None:
        if not _is_public(literal):
            raise UnsafeDestination(f"{host} is not a public address.")
        return literal
    if host == "localhost" or host.endswith(LOCAL_SUFFIXES) or "." not in host:
        raise UnsafeDestination(f"{host} is a local name.")
    try:
        infos = getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Unresolvable(f"{host} does not resolve.") from exc
    addresses = [str(info[4][0]) for info in infos]
    private = [a for a in addresses if not _is_public(a)]
    if not addresses or private:
        raise UnsafeDestination(f"{host} resolves to a non-public address ({', '.join(private)}).")
    return addresses[0]


def url_problem(url: str) -> str | None:
    """Why ``url`` may not be a webhook (None when it may). A name that does not resolve *now*
    is accepted here; the send-time check refuses it if it still does not."""
    try:
        host, port, _ = _split(url)
        try:
            resolve_public(host, port)
        except Unresolvable:
            return None
    except UnsafeDestination as exc:
        return str(exc)
    return None


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to an address checked in advance; TLS verifies the certificate for the name."""

    def __init__(self, host: str, address: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def post_json(url: str, body: bytes, headers: dict[str, str], *, timeout: float = 10) -> int:
    """POST ``body`` to ``url`` after the send-time check; the response status."""
    host, port, path = _split(url)
    address = resolve_public(host, port)
    conn = _PinnedHTTPSConnection(host, address, port, timeout)
    try:
        conn.request("POST", path, body=body, headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()
