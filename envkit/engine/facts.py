"""What kind of engine envkit talks to, asked once: Docker or Podman (through its Docker-compatible
API), local or remote, and how it gives containers GPUs: the NVIDIA runtime, CDI device names,
or not at all. Every GPU request and doctor's finding follow from `gpu_path`, so the two agree."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from envkit.engine.endpoint import Endpoint, current_endpoint
from envkit.platforms import PLATFORMS, architecture, known

GpuPath = Literal["nvidia", "cdi", "none"]
CDI_DIRS = (Path("/etc/cdi"), Path("/var/run/cdi"))  # where CDI specs are registered
CDI_GPU_KIND = "nvidia.com/gpu"
# Docker gives GPUs with its built-in "nvidia" device driver wherever the toolkit's hook is
# installed, even with no nvidia runtime registered.
# (nvidia-ctk alone is no sign: CDI-only hosts have it too.)
NVIDIA_HOOKS = ("nvidia-container-runtime-hook", "nvidia-container-runtime")


@dataclass(frozen=True)
class EngineFacts:
    endpoint: Endpoint
    name: str  # "Docker Engine 20.10.24", "Podman Engine 4.3.1"
    podman: bool
    runtimes: tuple[str, ...]  # OCI runtimes the engine lists (Docker: nvidia among them)
    cdi_gpus: tuple[str, ...]  # CDI device names of kind nvidia.com/gpu registered on its host
    nvidia_hook: bool = False  # the NVIDIA Container Toolkit's hook is installed on its host
    platform: str = PLATFORMS[0]  # what the engine runs natively: `platforms:`'s default

    @property
    def remote(self) -> bool:
        return self.endpoint.remote

    @property
    def gpu_path(self) -> GpuPath:
        """How GPUs reach a container here. Docker prefers its NVIDIA runtime where it has one;
        Podman has only CDI; either uses CDI where a spec names the GPUs."""
        if not self.podman and ("nvidia" in self.runtimes or self.nvidia_hook):
            return "nvidia"
        return "cdi" if self.cdi_gpus else "none"


def cdi_gpu_devices(dirs: tuple[Path, ...] = CDI_DIRS) -> tuple[str, ...]:
    """`nvidia.com/gpu=NAME` for every device in the CDI specs (JSON or YAML) under DIRS."""
    found: list[str] = []
    for folder in dirs:
        if not folder.is_dir():
            continue
        for spec_file in sorted(folder.iterdir()):
            spec = _read_spec(spec_file)
            if not isinstance(spec, dict) or spec.get("kind") != CDI_GPU_KIND:
                continue
            for device in spec.get("devices") or []:
                if isinstance(device, dict) and isinstance(device.get("name"), str):
                    found.append(f"{CDI_GPU_KIND}={device['name']}")
    return tuple(dict.fromkeys(found))


def _read_spec(path: Path) -> object:
    if path.suffix not in (".json", ".yaml", ".yml") or not path.is_file():
        return None
    import yaml

    try:  # a malformed spec is some other tool's to judge: it names no GPU here
        text = path.read_text()
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError):
        return None


def engine_facts(
    client: Any, version: dict[str, Any] | None = None, info: dict[str, Any] | None = None
) -> EngineFacts:
    """The facts of CLIENT's engine, asked once per client (a command asks in several places);
    VERSION and INFO where the caller has them already."""
    cached = getattr(client, "_envkit_facts", None)
    if isinstance(cached, EngineFacts):
        return cached
    from docker.errors import APIError

    from envkit.engine.client import refused

    endpoint = current_endpoint()
    try:
        version = version if version is not None else client.version()
        info = info if info is not None else client.info()
    except APIError as exc:  # a proxy in front of the socket that forbids the call
        raise refused(exc) from None
    components = [c.get("Name", "") for c in version.get("Components") or []]
    podman = any("podman" in str(name).lower() for name in components)
    label = "Podman Engine" if podman else "Docker Engine"
    runtimes = tuple(sorted((info.get("Runtimes") or {}).keys()))
    # The specs are the engine's machine's: readable here only where it is this machine.
    cdi = () if endpoint.remote else cdi_gpu_devices()
    hook = not endpoint.remote and any(shutil.which(tool) for tool in NVIDIA_HOOKS)
    name = f"{label} {version.get('Version', '?')}"
    arch = str(version.get("Arch", ""))
    native = architecture(arch).platform if known(arch) else PLATFORMS[0]
    facts = EngineFacts(endpoint, name, podman, runtimes, cdi, hook, native)
    client._envkit_facts = facts
    return facts


# Podman asks the kernel for open-files and process limits of its own choosing, above many
# hosts' hard limits (every start then fails with "error setting rlimit", after the ports are
# taken: a second try finds them busy). envkit asks Podman for limits a host allows: Linux's
# usual soft open-files limit with this host's hard one (4096 for a remote host, whose limits
# are not readable here), and processes enough for a training job's threads. Measured here: a
# host with hard limits of 20000 files took these; Podman's own defaults did not start.
PODMAN_NPROC = 4096
PODMAN_REMOTE_NOFILE = 4096


def podman_ulimits(facts: EngineFacts) -> list[Any]:
    if not facts.podman:
        return []
    import resource

    from docker.types import Ulimit

    hard = PODMAN_REMOTE_NOFILE
    if not facts.remote:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        hard = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    return [
        Ulimit(name="nofile", soft=min(1024, hard), hard=hard),
        Ulimit(name="nproc", soft=PODMAN_NPROC, hard=PODMAN_NPROC),
    ]


def run_container(
    client: Any,
    image: str,
    options: dict[str, Any],
    facts: EngineFacts,
    prepare: Callable[[Any], None] | None = None,
) -> Any:
    """Create a container, PREPARE it (files copied in before its first start), start it. Options
    may carry "cdi_devices": then (Podman) it is created through Podman's own API."""
    options = {key: value for key, value in options.items() if key != "detach"}
    cdi_devices = options.pop("cdi_devices", None)
    if facts.podman and "ulimits" not in options:
        options["ulimits"] = podman_ulimits(facts)
    if cdi_devices is not None:
        from envkit.engine.podman import create

        container = create(client, image, options, cdi_devices)
    else:
        container = client.containers.create(image, **options)
    try:
        if prepare is not None:
            prepare(container)
        container.start()
    except Exception:
        container.remove(force=True)  # never left behind half-made
        raise
    return container
