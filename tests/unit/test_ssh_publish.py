"""Where sshd is published (both loopbacks by default, IPv6 literals accepted, a host without
IPv6 handled) and where a login lands (the mounted home, as in the seed's box). The port probe
runs on this host's real sockets."""

# ruff: noqa: S104 - addresses compared and rendered, never bound

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import yaml

from envkit.addresses import canonical_address, parse_mapping, with_port
from envkit.config.load import load_text
from envkit.engine.compose import port_problem
from envkit.plan import HostFacts, Plan, make_plan
from envkit.plan.box.ssh import host_has_ipv6
from envkit.render.files import render_files
from tests.helpers import TEST_HOST

NO_IPV6_HOST = HostFacts(uid=1000, gid=1000, ipv6=False)


def _plan(text: str, host: HostFacts = TEST_HOST) -> Plan:
    return make_plan(load_text("name: a\nruntime:\n  gpus: none\n" + text), host)


def _ssh_ports(text: str, host: HostFacts = TEST_HOST) -> list[str]:
    compose = yaml.safe_load(render_files(_plan(text, host))["docker-compose.yml"])
    return [p for p in compose["services"]["a"]["ports"] if p.endswith(":22")]


def test_default_publishes_on_both_loopbacks_like_the_seeds_bare_port() -> None:
    assert _ssh_ports("") == ["127.0.0.1:8822:22", "[::1]:8822:22"]


def test_a_host_without_ipv6_gets_ipv4_alone_and_is_told() -> None:
    plan = _plan("", NO_IPV6_HOST)
    assert plan.ssh.bind == ("127.0.0.1",)
    assert any("no IPv6" in note for note in plan.notes)
    # Asked for explicitly, ::1 stays: `envkit up` then says the host lacks it.
    assert _plan("ssh:\n  bind: '::1'\n", NO_IPV6_HOST).ssh.bind == ("::1",)


@pytest.mark.parametrize(
    ("written", "published"),
    [
        ("0.0.0.0", ["0.0.0.0:8822:22"]),
        ("'[::1]'", ["[::1]:8822:22"]),
        ("['0.0.0.0', '::']", ["0.0.0.0:8822:22", "[::]:8822:22"]),
        ("'2001:DB8:0:0::7'", ["[2001:db8::7]:8822:22"]),
        ("10.1.2.3", ["10.1.2.3:8822:22"]),
    ],
)
def test_bind_takes_ipv4_and_ipv6_literals(written: str, published: list[str]) -> None:
    assert _ssh_ports(f"ssh:\n  bind: {written}\n") == published


def test_addresses_are_canonical_and_written_with_ports() -> None:
    assert canonical_address("[0:0:0:0:0:0:0:1]") == "::1"
    assert with_port("::1", 22) == "[::1]:22" and with_port("10.0.0.1", 22) == "10.0.0.1:22"
    assert parse_mapping("[::1]:8888:8889/udp") == ("::1", 8888, "8889", "udp")
    assert parse_mapping("6006:6006") == ("0.0.0.0", 6006, "6006", "tcp")


@pytest.mark.parametrize(
    ("volumes", "home", "expected"),
    [
        ('["$HOME:$HOME"]', None, "$HOME"),
        ('["${HOME}/:/work:rw"]', None, "/work"),
        ('["~:/home/me"]', None, "/home/me"),
        ('["./data:/data", "$HOME/datasets:/datasets"]', None, None),
        ('["$HOME:$HOME"]', "/workspace", "/workspace"),
        ('["$HOME:/home/${USER}"]', None, None),  # not a path the entrypoint can take
    ],
)
def test_login_lands_in_the_mounted_home(volumes: str, home: str | None, expected: str) -> None:
    text = f"runtime:\n  gpus: none\n  volumes: {volumes}\n"
    text += f"ssh:\n  home: {home}\n" if home else ""
    plan = make_plan(load_text("name: a\n" + text), TEST_HOST)
    assert plan.ssh.home == expected
    environment = yaml.safe_load(render_files(plan)["docker-compose.yml"])["services"]["a"][
        "environment"
    ]
    assert environment.get("ENVKIT_HOME") == expected


@pytest.fixture
def held_port() -> Iterator[tuple[str, int]]:
    family, address = (socket.AF_INET6, "::1") if host_has_ipv6() else (socket.AF_INET, "127.0.0.1")
    with socket.socket(family, socket.SOCK_STREAM) as holder:
        holder.bind((address, 0))
        holder.listen()
        yield address, holder.getsockname()[1]


def test_port_probe_tells_in_use_from_not_this_hosts(held_port: tuple[str, int]) -> None:
    address, port = held_port
    assert port_problem(address, port) == "in use"
    # TEST-NET-3 (RFC 5737): never an address of this host.
    assert port_problem("203.0.113.7", port) == "not an address of this host"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert port_problem("127.0.0.1", free) is None
