"""`envkit up`: start the environment and wait until sshd is healthy; twice changes nothing.
A recreate that would throw away what a member installed by hand is named and asked about (or
refused in a script without --yes), so that no member's work is lost."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docker.errors import ImageNotFound

from envkit.commands import build, terminal_input
from envkit.config.rules import missing_keys
from envkit.engine.client import docker_client, running_containers
from envkit.engine.compose import run_compose, taken_ports, use_sdk, wait_healthy
from envkit.engine.endpoint import current_endpoint
from envkit.engine.facts import engine_facts
from envkit.engine.lifecycle import UpPlan, decide
from envkit.engine.registry import CONTEXT_LABEL
from envkit.engine.sdk_up import create_volumes, sdk_up
from envkit.engine.team_sync import KeySync, sync_keys, sync_notebook_tokens
from envkit.errors import ConfigError, EngineUnreachableError, EnvkitError, ImageMissingError
from envkit.plan.box.access import Service
from envkit.plan.models.plan import Plan
from envkit.render.outputs import render_outputs, write_outputs
from envkit.render.ssh_config import connect_host, jump_host
from envkit.services.member_gpus import with_host_gpus
from envkit.services.project import Project, load_project
from envkit.services.sharing import (
    build_platforms,
    fetch_shared,
    registry_of,
    require_signed,
    say,
    shared_image,
)
from envkit.supply.cosign import SignatureError


@dataclass(frozen=True, kw_only=True)
class UpRequest:
    config: str | None = None
    timeout: float = 90.0  # seconds to wait for sshd to be healthy
    registry: str | None = None  # --registry, over the config's registry:
    build: bool = False  # --build: build here even where the registry has the image
    json: bool = False  # one object on stdout; people's lines on stderr
    yes: bool = False  # recreate even where a member's hand-installed packages would go
    keep_running: tuple[str, ...] = ()  # members whose containers are not recreated


def _check_ports(client: Any, plan: Plan) -> None:
    if taken := taken_ports(plan, running_containers(client, plan.project)):
        raise EnvkitError(
            f"cannot publish host port {taken[0]}",
            "pick another port in envkit.yaml, or stop what holds it"
            if taken[0].why == "in use"
            else "list only this host's addresses in envkit.yaml (ssh.bind, runtime.ports)",
        )


def _image_ready(
    client: Any,
    project: Project,
    rendered: dict[str, str],
    config: str | None,
    registry: str | None,
    force_build: bool,
) -> None:
    """The project's image on the engine: built here with --build; else the local one where it
    was built from these inputs; else the registry's; else the local one, or a clear error."""
    registry = registry_of(project, registry)
    if force_build:
        # Only the engine's own platform: `up` runs that one (the others are `envkit build`'s).
        native = engine_facts(client).platform
        only = native if native in project.plan.platforms else None
        build.run(
            build.BuildRequest(config=config, registry=registry, force_build=True, platform=only)
        )
        return
    tag = project.plan.image.tag
    try:
        local = client.images.get(tag)
    except ImageNotFound:
        local = None
    if registry is not None:
        platforms = build_platforms(project, client)
        wanted = shared_image(project, registry, rendered, platforms=platforms)
        ours = local is not None and local.labels.get(CONTEXT_LABEL) == wanted.context
        if ours and _signed_here(tag, project.plan.signing_key):
            return
        if fetch_shared(client, project, wanted, say) is not None:
            return
        if project.plan.signing_key and local is not None:
            raise SignatureError(
                f"signing.verify: {tag} on this engine carries no signature of the team's key, "
                "and the registry has no signed image of these inputs to pull instead",
                "`envkit push --sign KEY` it where it was built, then `envkit up` again (or "
                "`envkit up --build` to build it here and run your own build)",
            )
    if local is None:
        raise ImageMissingError(
            f"image {tag} is not on this engine",
            "`envkit up --build` builds it here (or `envkit build`)"
            + ("" if registry else "; with registry: set, `envkit up` pulls a pushed one"),
        )


def guard(at_risk: list[tuple[str, Any]], yes: bool, ask: Callable[[str], str] | None) -> None:
    """Say what a recreate would lose; go on only with --yes or a yes at the terminal."""
    if not at_risk:
        return
    who = ", ".join(sorted({who for who, _ in at_risk}))
    text = (
        "; ".join(changes.describe(who) for who, changes in at_risk)
        + ". They are not in envkit.yaml and go with this recreate (homes, the workspace and "
        "the shared cache stay)"
    )
    fix = (
        "add them to envkit.yaml (packages.apt, packages.pip), or keep the container as it is: "
        f"`envkit up --keep-running {who.split(', ')[0]}`; `envkit up --yes` recreates anyway"
    )
    if yes:
        sys.stderr.write(f"note: {text}; recreating (--yes)\n")
        return
    if ask is None:
        raise EnvkitError(text, fix)
    sys.stderr.write(f"{text}.\n{fix}\n")
    if ask("Recreate anyway? [y/N] ").strip().lower() not in ("y", "yes"):
        raise EnvkitError("nothing was recreated", fix)


def _signed_here(tag: str, key: str | None) -> bool:
    """Without signing.verify any local image of these inputs will do; with it, only one whose
    registry digest the team's key signed (a `docker load` or hand-run pull is not enough)."""
    if key is None:
        return True
    try:
        require_signed(tag, key)
    except SignatureError as refused:
        say(f"{tag} here is not trusted ({refused}): taking the registry's signed one")
        return False
    return True


def run(request: UpRequest) -> int:
    """`envkit up`; with --json, every line for people goes to stderr and stdout gets one JSON
    object: each container's state and login, written even when one did not become healthy."""
    if not request.json:
        return _up(request, {})
    stdout, report = sys.stdout, dict[str, Any]()
    with contextlib.redirect_stdout(sys.stderr):
        try:
            return _up(request, report)
        finally:
            if report:
                stdout.write(json.dumps(report) + "\n")
                stdout.flush()


def _up(request: UpRequest, report: dict[str, Any]) -> int:
    project = load_project(request.config)
    # sshd with no key at all locks everyone out; say so before starting it, unless asked.
    if (rule := missing_keys(project.loaded.spec)) is not None:
        raise ConfigError(str(project.config), [project.loaded.issue(*rule)])
    # Before anything is written or started: an id the host lacks stops here, counts become ids.
    project, gpu_note = with_host_gpus(project, current_endpoint().remote)
    if gpu_note:
        say(gpu_note)
    plan, out_dir = project.plan, project.context_dir
    client = docker_client()
    outputs = render_outputs(plan, out_dir, project.project_dir)
    _image_ready(client, project, outputs.context, request.config, request.registry, request.build)
    write_outputs(outputs)  # after a build's own render: this one has the GPUs made concrete
    facts = engine_facts(client)
    remote = facts.remote
    if not remote:  # a remote engine's ports are its machine's: it says itself if one is taken
        _check_ports(client, plan)
    decided = decide(client, plan, request.keep_running)
    guard(decided.at_risk, request.yes, terminal_input())  # before anything is recreated or removed
    running_before = {p.service.container_name for p in decided.planned if p.action == "keep"}
    for gone in decided.departed:  # a member who left envkit.yaml: the container goes, the
        gone.container.remove(force=True)  # home stays on its volume
    create_volumes(client, plan)
    _workspace_ready(plan, remote, facts.podman)
    if use_sdk(remote or facts.podman):
        sdk_up(client, plan, out_dir, facts, decided)
    else:
        _compose_up(out_dir, plan, decided)
    names = [s.container_name for s in plan.services]
    states = wait_healthy(client, names, request.timeout, facts.podman)
    synced = sync_keys(client, plan, running_before, out_dir if remote else None)
    refreshed = {s.container: s for s in synced}
    for name in sync_notebook_tokens(client, plan):
        sys.stdout.write(f"{name}: the member list changed; the notebook token was rotated\n")
    for gone in decided.departed:
        sys.stdout.write(
            f"{gone.container.name}: removed with its open sessions (no longer in envkit.yaml); "
            "its home is kept (`envkit status` lists it)\n"
        )
    for service in plan.services:
        _say_state(plan, service, states, refreshed.get(service.container_name), remote)
    leaving = [g.container.name for g in decided.departed]
    report.update(_report(plan, states, refreshed, leaving, remote))
    if any(state != "healthy" for state in states.values()):
        raise EngineUnreachableError(
            "not every container became healthy", "see `envkit status` and `docker logs CONTAINER`"
        )
    return 0


def _compose_up(out_dir: Path, plan: Plan, decided: UpPlan) -> None:
    """compose recreates what changed; the containers --keep-running names are left as they
    are (compose's --no-recreate), whatever changed."""
    held = [p.service.name for p in decided.planned if p.why and p.action in ("keep", "start")]
    others = [s.name for s in plan.services if s.name not in held]
    if others:
        run_compose(out_dir, plan.project, "up", "-d", "--no-build", *others)
    if held:
        run_compose(out_dir, plan.project, "up", "-d", "--no-build", "--no-recreate", *held)


def _workspace_ready(plan: Plan, remote: bool, podman: bool) -> None:
    """The project folder the containers mount: made here (as the invoking user, never root's
    by the engine) where the config names one that does not exist yet."""
    workspace = plan.workspace
    if workspace is None:
        return
    if remote and workspace.within_project is not None:
        say(
            f"note: the engine is on another machine: this machine's {workspace.source} is not "
            f"mounted at {workspace.target} (set workspace.path to a folder on that machine)"
        )
        return
    if not remote:
        Path(workspace.source).mkdir(parents=True, exist_ok=True)
        # rootless Podman maps the login user onto the invoking one: its uid is not the host's
        for line in () if podman else unwritable(Path(workspace.source), plan.services):
            say(line)


def unwritable(source: Path, services: tuple[Service, ...]) -> list[str]:
    """A note for each login user who cannot write the mounted project folder (root's on a lab
    server, the login user uid 1000), with the fix; rootful Docker maps uids as they are."""
    info = source.stat()
    notes = []
    for service in services:
        owner, group = service.uid == info.st_uid, service.gid == info.st_gid
        if info.st_mode & (0o200 if owner else 0o020 if group else 0o002):
            continue
        notes.append(
            f"note: {service.user} (uid {service.uid}) in {service.container_name} cannot "
            f"write the workspace {source}, which belongs to uid {info.st_uid} (mode "
            f"{info.st_mode & 0o777:o}); fix: set ssh.uid: {info.st_uid} and ssh.gid: "
            f"{info.st_gid} in envkit.yaml (the login user takes the folder owner's ids), or "
            f"`sudo chown -R {service.uid}:{service.gid} {source}`"
        )
    return notes


def _report(
    plan: Plan,
    states: dict[str, str],
    refreshed: dict[str, KeySync],
    removed: list[str],
    remote: bool,
) -> dict[str, Any]:
    rekeyed = {name for name, sync in refreshed.items() if sync.refreshed}
    return {
        "image": plan.image.tag,
        "healthy": all(state == "healthy" for state in states.values()),
        "containers": [
            {
                "name": s.container_name,
                "member": s.member,
                "state": states.get(s.container_name, "unknown"),
                "user": s.user,
                "ssh_port": s.ssh_port if plan.ssh.enabled else None,
                "login": _login_hint(plan, s, remote) if plan.ssh.enabled else None,
                "gpus": list(s.gpus) if isinstance(s.gpus, tuple) else s.gpus,
                "keys_refreshed": s.container_name in rekeyed,
            }
            for s in plan.services
        ],
        "removed": removed,
    }


def _say_state(
    plan: Plan, service: Service, states: dict[str, str], sync: KeySync | None, remote: bool
) -> None:
    """One line per container: its health, what changed in its keys, and how to log in."""
    sys.stdout.write(f"{service.container_name}: {states.get(service.container_name, 'unknown')}")
    if sync is not None and sync.refreshed:
        sys.stdout.write(f" (keys refreshed: {sync.keys})")
        if sync.ended:
            sys.stdout.write(
                f" (a key was removed: open SSH sessions of {service.user} ended, "
                f"{sync.ended} process(es))"
            )
    if plan.ssh.enabled:
        sys.stdout.write(f"  {_login_hint(plan, service, remote)}")
    sys.stdout.write("\n")


def _login_hint(plan: Plan, service: Service, remote: bool) -> str:
    """How to log in: on the engine's machine when it is remote (through it, with -J, where
    sshd listens only on that machine's loopback)."""
    host = current_endpoint().host if remote else None
    jump = jump_host(plan, host)
    target = connect_host(plan, None if jump else host)
    via = f"-J {current_endpoint().ssh_login or jump} " if jump else ""
    return f"ssh {via}-p {service.ssh_port} {service.user}@{target}"
