"""One tag for every platform: each platform's image is pushed under TAG-ARCH, then the pushed
manifests are joined into one manifest list (the index a `docker pull` on any architecture
resolves to its own image) under TAG.

The Docker engine's API has no call that writes a manifest list, so the Docker CLI's
`docker manifest` does the joining: it speaks to the registry with the credentials `docker
login` left, as the engine does, and envkit reads none. It writes a Docker manifest list (not an
OCI index): what registries and clients of every age read, and what the children, Docker
schema-2 manifests, belong in. Plain HTTP is allowed only where the engine allows it itself (a
loopback registry, or one in its insecure-registries)."""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
from typing import Any

from envkit.engine.registry import Say, SharedImage
from envkit.errors import EnvkitError

TIMEOUT_S = 300


def _insecure(client: Any, host: str) -> bool:
    """Whether the engine itself talks plain HTTP to HOST: loopback, or insecure-registries."""
    name = host.rsplit(":", 1)[0].strip("[]")
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    if name == "localhost" or (address is not None and address.is_loopback):
        return True
    try:
        config = client.info().get("RegistryConfig") or {}
    except Exception:  # an engine that cannot say is taken as strict
        return False
    entry = (config.get("IndexConfigs") or {}).get(host) or {}
    if entry.get("Secure") is False:
        return True
    if address is None:  # insecure-registries given as networks: the host's address within one
        return False
    cidrs = config.get("InsecureRegistryCIDRs") or []
    return any(address in ipaddress.ip_network(str(c), strict=False) for c in cidrs)


def require_cli() -> str:
    """The Docker CLI, refused before anything is pushed where it is missing."""
    docker = shutil.which("docker")
    if docker is None:
        raise EnvkitError(
            "joining the platforms' images under one tag needs the Docker CLI (`docker manifest`)",
            "install the docker CLI on this machine (the engine may stay where it is)",
        )
    return docker


def _manifest(
    args: list[str], insecure: bool, refs: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    docker = require_cli()
    flags = [*args[1:], *(["--insecure"] if insecure else [])]
    # `--` ends the options: a reference is never read as one.
    argv = [docker, "manifest", args[0], *flags, "--", *refs]
    env = {**os.environ, "DOCKER_CLI_EXPERIMENTAL": "enabled"}  # 20.10's CLI keeps it there
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise EnvkitError(
            f"`docker manifest {args[0]}` did not finish in {TIMEOUT_S} s",
            "check that the registry answers, then `envkit push` again",
        ) from None


def join(client: Any, image: SharedImage, tag: str, children: list[str], say: Say) -> str:
    """Write REPOSITORY:TAG as the manifest list of CHILDREN (tags in the same repository,
    pushed already); the list's digest."""
    insecure = _insecure(client, image.registry_host)
    target = f"{image.repository}:{tag}"
    refs = [f"{image.repository}:{child}" for child in children]
    # A list of the same name left by an earlier run would be amended, not replaced.
    _manifest(["rm"], insecure=False, refs=(target,))
    created = _manifest(["create"], insecure, (target, *refs))
    if created.returncode != 0:
        raise _failed(image, "create", created)
    pushed = _manifest(["push", "--purge"], insecure, (target,))
    if pushed.returncode != 0:
        raise _failed(image, "push", pushed)
    say(f"  {target}: one index of {', '.join(children)}")
    return pushed.stdout.strip().splitlines()[-1] if pushed.stdout.strip() else ""


def _failed(image: SharedImage, step: str, done: subprocess.CompletedProcess[str]) -> EnvkitError:
    from envkit.engine.registry import failure

    said = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"
    return failure(image, "push", f"docker manifest {step}: {said}")
