"""`envkit status`: the environment's containers, their health, ports and image."""

from __future__ import annotations

import sys

from envkit.addresses import with_port
from envkit.commands.project import load_project


def status(config: str | None) -> int:
    from envkit.engine.client import containers, docker_client

    plan = load_project(config).plan
    found = {c.name: c for c in containers(docker_client(), plan.project)}
    for service in plan.services:
        container = found.get(service.container_name)
        if container is None:
            sys.stdout.write(f"{service.container_name}: not created\n")
            continue
        health = container.attrs.get("State", {}).get("Health", {}).get("Status", "-")
        ports = ", ".join(
            f"{with_port(binding['HostIp'], binding['HostPort'])}->{port}"
            for port, bindings in (container.ports or {}).items()
            # IPv4 first, whatever order the engine lists them in
            for binding in sorted(bindings or (), key=lambda b: (":" in b["HostIp"], b["HostIp"]))
        )
        # The image id shows at a glance that every member runs the same (verified) image.
        image = str(container.attrs.get("Image", "")).removeprefix("sha256:")[:12]
        sys.stdout.write(
            f"{service.container_name}: {container.status} ({health}) {ports}  image {image}\n"
        )
    return 0 if found else 1
