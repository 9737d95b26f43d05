"""`envkit build`: render, then build the image with BuildKit (`docker buildx`) or the docker
SDK's classic builder, whichever --builder, build.builder or the Docker CLI decides."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docker.errors import DockerException, ImageNotFound

from envkit.bundle.manifest import check_bundle
from envkit.bundle.rebuild import offline_files, offline_plan, require_buildkit
from envkit.engine.build import BuildOptions, Reporter
from envkit.engine.builders import Backend, build_image, choose_backend
from envkit.engine.client import docker_client
from envkit.engine.emulation import require_emulation
from envkit.engine.facts import engine_facts
from envkit.engine.progress import console_reporter, json_reporter, quiet_reporter
from envkit.engine.registry import CONTEXT_LABEL, Say
from envkit.errors import BuildFailedError, EnvkitError
from envkit.lock.pins import check_base, check_platforms
from envkit.lock.requested import INPUTS_LABEL, inputs_digest
from envkit.plan.image.pip_options import NETRC_ENV, NETRC_SECRET, netrc_file
from envkit.platforms import platform_tag
from envkit.render.steps import STEPS_LABEL, label, reused, steps
from envkit.services.project import LOCK_FILE, Project, load_project, render_project, with_lock
from envkit.services.sharing import (
    build_platforms,
    fetch_shared,
    inputs_of,
    local_images,
    registry_of,
    shared_image,
)

if TYPE_CHECKING:
    from envkit.engine.registry import SharedImage
    from envkit.plan import Plan


@dataclass(frozen=True, kw_only=True)
class BuildRequest:
    config: str | None = None
    out: Path | None = None
    tag: str | None = None
    no_cache: bool = False
    build_args: tuple[str, ...] = ()
    quiet: bool = False
    json: bool = False  # progress as JSON lines on stdout
    verbose: bool = False
    locked: bool = False
    lock_file: Path | None = None
    builder: str | None = None  # --builder; None: the config's build.builder
    registry: str | None = None  # --registry, over the config's registry:
    force_build: bool = False  # --build: build here even where the registry has the image
    progress: str = "auto"  # tty, plain, json, or auto (tty on a terminal)
    dry_run: bool = False  # render and list the steps; build nothing
    platform: str | None = None  # --platform: only this one of the config's platforms
    offline_from: Path | None = None  # --offline --from BUNDLE: from the bundle's files alone


def _args(pairs: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise EnvkitError(
                f"--build-arg {pair!r} is not KEY=VALUE", "write it as --build-arg NAME=value"
            )
        parsed[key] = value
    return parsed


def run(request: BuildRequest) -> int:
    if request.dry_run:
        return dry_run(request)
    build_project(request)
    return 0


def dry_run(request: BuildRequest) -> int:
    """Render, then list the steps a build would run: which the engine's image of this project
    already has (the build reuses them) and which would run. Builds nothing."""
    project, _ = _pinned(request, load_project(request.config, request.out))
    client = docker_client()
    backend = choose_backend(
        request.builder or project.plan.install.builder, engine_facts(client).podman
    )
    rendered = render_project(project)
    tag = request.tag or project.plan.image.tag
    try:
        labelled = client.images.get(tag).labels.get(STEPS_LABEL)
    except ImageNotFound:
        labelled = None
    found = steps(rendered[backend.dockerfile], rendered)
    kept = reused(found, labelled)
    if request.json:
        rows = [
            {"step": s.number, "instruction": s.instruction, "cached": s.number <= kept}
            for s in found
        ]
        sys.stdout.write(json.dumps({"image": tag, "builder": backend.name, "steps": rows}) + "\n")
        return 0
    width = len(str(len(found)))
    for step in found:
        mark = "cached" if step.number <= kept else "run"
        shown = step.instruction if len(step.instruction) <= 90 else step.instruction[:89] + "…"
        sys.stdout.write(f"[{step.number:>{width}}/{len(found)}] {mark:<6} {shown}\n")
    if labelled is None:
        sys.stdout.write(
            f"{tag} (built by this envkit) is not on this engine: every step would run, "
            "unless layers of another image serve\n"
        )
    sys.stdout.write(
        f"{backend.name}: {len(found) - kept} of {len(found)} steps would run; nothing built "
        f"(context rendered in {project.context_dir})\n"
    )
    return 0


def build_project(request: BuildRequest) -> str:
    """Render, then build (or pull where the registry has it): the image's tag."""
    project = load_project(request.config, request.out)
    build_args = _args(request.build_args)
    registry = None if request.offline_from else registry_of(project, request.registry)
    # Every refusal comes before anything is written or the engine asked.
    project, lock = _pinned(request, project)
    client = docker_client()
    facts = engine_facts(client)
    backend = choose_backend(request.builder or project.plan.install.builder, facts.podman)
    if request.offline_from is not None:
        require_buildkit(backend.name)  # before anything is rendered
    platforms = build_platforms(project, client, request.platform)
    if lock is not None:
        path = request.lock_file or project.project_dir / LOCK_FILE
        path = request.offline_from / LOCK_FILE if request.offline_from else path
        check_base(lock, client, path, by_id=request.offline_from is not None)
        check_platforms(lock, platforms, path)
    rendered = render_project(project)  # once: the inputs digest and each build's steps read it
    tag = request.tag or project.plan.image.tag
    shared = None
    if registry is not None:
        every = build_platforms(project, client)  # the inputs tag names them all
        shared = shared_image(project, registry, rendered, build_args, platforms=every)
        wanted = not request.force_build and request.platform is None
        if wanted and _pulled(request, project, client, shared, tag):
            return tag
    for platform in platforms:  # only what is about to be built: a pull needed no emulator
        require_emulation(platform, facts.platform, facts.remote)
    images = _platform_images(project, request.tag, platforms, request.platform is not None)
    for platform, image_tag in images.items():
        native = platform == facts.platform and len(images) == 1 and image_tag == tag
        built = replace(request, tag=image_tag)
        build = _Build(built, project, rendered, backend, build_args, shared)
        _build(build, client, None if native else platform)
    main = images.get(facts.platform) or (images[platforms[0]] if len(images) > 1 else None)
    if main is not None and main != tag:  # the engine's own (else the first): the project's tag
        repository, _, name = tag.rpartition(":")
        client.images.get(main).tag(repository, name)
        if not request.quiet and not request.json:
            sys.stdout.write(f"tagged {tag} as {main}; `envkit push` joins the platforms\n")
    return tag


def _pulled(
    request: BuildRequest, project: Project, client: Any, shared: SharedImage, tag: str
) -> bool:
    """Where the registry has the image these inputs build, pull it instead (the engine's own
    platform of it); whether it did."""
    local = fetch_shared(client, project, shared, _say_to(request))
    if local is None:
        _say_to(request)("building here")
        return False
    _tagged(request, tag, local.id, f"pulled from {shared.registry_host}; --build builds here")
    if request.tag:
        repository, _, name = tag.rpartition(":")
        local.tag(repository, name)
    return True


def _pinned(request: BuildRequest, project: Project) -> tuple[Project, Any]:
    """The project as --locked or --offline's bundle pins it, and the lock (None: unpinned)."""
    if request.offline_from is not None:
        return _offline(project, request.offline_from, request.lock_file)
    if request.locked:
        return with_lock(project, request.lock_file)
    return project, None


def _offline(project: Project, bundle: Path, lock_file: Path | None) -> tuple[Project, Any]:
    """The project as the bundle's lock pins it, to be built from the bundle alone."""
    if lock_file is not None:
        raise EnvkitError("--offline builds from the bundle's envkit.lock", "drop --lock-file")
    listed = check_bundle(bundle, project.plan.signing_key, LOCK_FILE)
    try:
        project, lock = with_lock(project, bundle / LOCK_FILE)
    except EnvkitError as exc:  # its fix says to lock again, which needs the network
        raise EnvkitError(
            exc.message,
            f"build offline with the envkit.yaml the bundle carries ({bundle}/envkit.yaml)",
        ) from None
    return replace(project, plan=offline_plan(project.plan, lock, bundle, listed)), lock


def _platform_images(
    project: Project, tag: str | None, platforms: tuple[str, ...], picked: bool
) -> dict[str, str]:
    """Each platform's image tag: --tag's (TAG-ARCH each where several) or the project's; a
    --platform of several is that platform's own (TAG-ARCH), as `envkit push` expects it."""
    if picked and len(project.plan.platforms) > 1:
        return {platforms[0]: platform_tag(tag or project.plan.image.tag, platforms[0])}
    return local_images(project, platforms, tag)


@dataclass(frozen=True)
class _Build:
    """What every platform's build of one `envkit build` shares."""

    request: BuildRequest
    project: Project
    rendered: dict[str, str]  # the build context, rendered once
    backend: Backend
    build_args: dict[str, str]
    shared: SharedImage | None


def _build(build: _Build, client: Any, platform: str | None = None) -> None:
    request, project, backend, shared = build.request, build.project, build.backend, build.shared
    plan, out_dir = project.plan, project.context_dir
    tag = request.tag or plan.image.tag
    if request.json:
        sys.stdout.write(json.dumps({"event": "builder", "builder": backend.name}) + "\n")
    elif not request.quiet:
        sys.stdout.write(
            f"building {tag}{f' for {platform}' if platform else ''} from "
            f"{out_dir}/{backend.dockerfile} (base {plan.image.base})\n"
            f"builder: {backend.why}\n"
        )
    # The inputs digest is a label whether or not a registry is set: `envkit push` later checks
    # that the image it sends is the one these inputs build.
    platforms = build_platforms(project, client)
    context = (
        shared.context
        if shared
        else inputs_of(project, build.rendered, build.build_args, platforms=platforms)
    )
    host = "host" if plan.runtime.build_network == "host" else None
    options = BuildOptions(
        tag=tag,
        no_cache=request.no_cache,
        build_args=build.build_args,
        # An offline build's steps get none (only the bundle, bound in); else host or the default.
        network="none" if plan.install.offline else host,
        labels={
            INPUTS_LABEL: inputs_digest(plan),
            CONTEXT_LABEL: context,
            STEPS_LABEL: label(steps(build.rendered[backend.dockerfile], build.rendered)),
        },
        cache_from=_cache_from(client, backend.name, shared, _say_to(request)),
        secrets=_secrets(plan, backend.name, _say_to(request)),
        platform=platform,
    )
    try:
        bundle = request.offline_from
        with offline_files(out_dir, bundle) if bundle else nullcontext():
            progress = build_image(client, out_dir, options, _reporter(request), backend)
    except BuildFailedError as failed:
        _explain_missing_base(client, plan.locked.base if plan.locked else plan.image.base, failed)
        raise
    _tagged(request, tag, progress.image_id or "", f"built by {backend.name}", backend.name)


def _secrets(plan: Plan, backend: str, say: Say) -> dict[str, str]:
    """The netrc a private index's layer mounts: handed to BuildKit as a secret (in no layer,
    no history). The classic builder has no secrets: the index is asked without them."""
    indexes = plan.packages.private_indexes
    if not indexes:
        return {}
    found = netrc_file()
    if found is None:
        say(f"no ${NETRC_ENV} or ~/.netrc: {', '.join(indexes)} asked without credentials")
        return {}
    if backend != "buildkit":
        say(
            f"the {backend} builder has no build secrets: {', '.join(indexes)} asked without "
            f"the credentials in {found} (build.builder: buildkit passes them)"
        )
        return {}
    if "," in str(found) or '"' in str(found):
        raise EnvkitError(
            f"the netrc path {found} has a comma or a quote (BuildKit's --secret cannot take it)",
            f"move it, or point ${NETRC_ENV} at a copy elsewhere",
        )
    return {NETRC_SECRET: str(found)}


def _cache_from(client: Any, backend: str, shared: SharedImage | None, say: Say) -> tuple[str, ...]:
    """The registry's latest image as a cache for a build that could not pull its own: BuildKit
    reads its inline cache from the registry; the classic builder needs it on the engine."""
    if shared is None:
        return ()
    if backend == "buildkit":
        return (shared.latest,)
    try:
        client.images.pull(shared.repository, tag="latest")
    except DockerException:
        say(f"no {shared.latest} to reuse layers from: building from scratch")
        return ()
    return (shared.latest,)


def _tagged(
    request: BuildRequest, tag: str, image_id: str, how: str, builder: str | None = None
) -> None:
    if request.quiet:
        sys.stdout.write(f"{tag} {image_id}\n")
    elif not request.json:
        sys.stdout.write(f"tagged {tag} ({how}); next: `envkit up`\n")
    else:
        row = {"event": "tagged", "tag": tag, "image_id": image_id}
        sys.stdout.write(json.dumps({**row, "builder": builder or "registry"}) + "\n")


def _say_to(request: BuildRequest) -> Say:
    """Where registry lines go: stdout for people, stderr under --quiet and --json (whose stdout
    is read by programs)."""

    def say(line: str) -> None:
        stream = sys.stderr if request.quiet or request.json else sys.stdout
        stream.write(line + "\n")
        stream.flush()

    return say


def _explain_missing_base(client: Any, base: str, failed: BuildFailedError) -> None:
    """A base image that is neither on the engine nor reachable fails either builder with a
    registry error; say what is missing instead."""
    try:
        client.images.get(base)
    except ImageNotFound:
        raise BuildFailedError(
            f"the base image {base} is not on this engine, and fetching it failed:\n  "
            + str(failed.args[0]).replace("\n", "\n  "),
            f"`docker pull {base}` where a registry answers, or `docker load` it here; "
            "or set base.image in envkit.yaml to an image the engine has (`docker images`)",
        ) from None
    except DockerException:
        return


def _reporter(request: BuildRequest) -> Reporter:
    if request.json:
        return json_reporter()
    if request.quiet:
        return quiet_reporter()
    tty = request.progress == "tty" or (request.progress == "auto" and sys.stdout.isatty())
    return console_reporter(verbose=request.verbose, tty=tty)
