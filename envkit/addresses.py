"""Host addresses that ports are published on, IPv4 and IPv6 alike: checked, canonical, written
with a port. Shared by config (validation), plan, render and engine.

The seed's compose published `"8822:22"`, and Docker listens on both families for that. envkit
publishes on loopback by default, and on both loopbacks, so `ssh localhost` works whichever family
the client tries first. Addresses are kept in their canonical text form: IPv6 without brackets
and compressed. They get brackets only where a port follows (compose's `[::1]:8822:22`).

May import: errors.
"""

from __future__ import annotations

import ipaddress
import re
from typing import NamedTuple

from envkit.errors import FieldError

LOOPBACKS = ("127.0.0.1", "::1")
_ADDRESS_FIX = (
    "write an IPv4 or IPv6 address: 127.0.0.1 or ::1 (this host only), "
    "0.0.0.0 or :: (every interface), or a list such as [127.0.0.1, '::1']"
)
_MAPPING = re.compile(
    r"(?:(?P<ip>[0-9.]+|\[[0-9A-Fa-f:.]+\]):)?(?P<host>[0-9]{1,5}):(?P<container>[0-9]{1,5})"
    r"(?:/(?P<proto>tcp|udp))?"
)


def canonical_address(value: str) -> str:
    """An IPv4 or IPv6 literal, with or without brackets, in canonical form; no names, no zones."""
    text = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    if "%" in text or not text or len(text) > 45:
        raise FieldError("not an IPv4 or IPv6 address", _ADDRESS_FIX)
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise FieldError("not an IPv4 or IPv6 address", _ADDRESS_FIX) from None


def is_ipv6(address: str) -> bool:
    return ":" in address


def with_port(address: str, port: int | str) -> str:
    """ADDRESS:PORT as compose and ssh want it: IPv6 in brackets."""
    return f"[{address}]:{port}" if is_ipv6(address) else f"{address}:{port}"


def is_wildcard(address: str) -> bool:
    return address in ("0.0.0.0", "::")  # noqa: S104 - compared, not bound


def distinct_addresses(addresses: tuple[str, ...]) -> tuple[str, ...]:
    """A bind list Docker can publish: not empty, no repeats, no wildcard beside another address
    of its family (the port would be published twice and the second fails)."""
    if not addresses:
        raise FieldError("no address to publish on", f"{_ADDRESS_FIX}; or ssh.enabled: false")
    if len(set(addresses)) != len(addresses):
        raise FieldError("an address is listed twice", "list each address once")
    for family in (False, True):
        same = [a for a in addresses if is_ipv6(a) == family]
        if len(same) > 1 and any(is_wildcard(a) for a in same):
            wildcard = next(a for a in same if is_wildcard(a))
            raise FieldError(
                f"{wildcard} already covers every address of its family, so {same} would "
                "publish the same port twice",
                f"keep {wildcard} alone, or list only specific addresses",
            )
    return addresses


def _port_number(text: str, which: str) -> int:
    number = int(text)
    if not 1 <= number <= 65535:
        raise FieldError(f"{which} port {number} is out of range", "use a port between 1 and 65535")
    return number


def check_mapping(value: str) -> str:
    """A runtime.ports entry, refused unless its ports are in range and its address is one."""
    fix = (
        "write [ADDRESS:]HOST:CONTAINER[/tcp|udp], e.g. '6006:6006', "
        "'127.0.0.1:8888:8888' or '[::1]:8888:8888'"
    )
    found = _MAPPING.fullmatch(value)
    if found is None:
        raise FieldError("not a valid port mapping", fix)
    _port_number(found["host"], "host")
    _port_number(found["container"], "container")
    if found["ip"] is not None:
        canonical_address(found["ip"])
    return value


class PortBinding(NamedTuple):
    host_ip: str
    host_port: int
    container_port: str
    protocol: str


def parse_mapping(mapping: str) -> PortBinding:
    """A runtime.ports entry, read. No address means every interface, as Docker reads it."""
    found = _MAPPING.fullmatch(mapping)
    if found is None:  # validated at load; a plan built by hand could still carry one
        raise FieldError("not a valid port mapping", "see runtime.ports in docs/config.md")
    address = canonical_address(found["ip"]) if found["ip"] else "0.0.0.0"  # noqa: S104
    return PortBinding(address, int(found["host"]), found["container"], found["proto"] or "tcp")
