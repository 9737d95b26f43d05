"""Rules across fields of a valid-looking envkit.yaml: each value passes its own check, but
together they would break the build, lock someone out, or quietly weaken security.

Each rule yields (where, problem, fix, value); the loader adds the line. Port clashes between
containers are found in plan/box/access.py, where each member's port is known."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from envkit.catalog.mirrors import APT_ARCHIVES, preset_hosts
from envkit.config.fields import size_bytes
from envkit.config.model import Spec
from envkit.config.pip_package import PipPackage, requirement_of

Loc = tuple[str | int, ...]
Rule = tuple[Loc, str, str, object]

# Envkit's own folders in the container: the keys it installs, the host keys it keeps, the
# scripts it runs. A volume on one of them, inside one, or over a folder that holds one hides it.
OWN_FOLDERS = ("/run/envkit", "/var/lib/envkit", "/opt/envkit")
# Indexes whose TLS check must never be turned off: trusting them would let anyone on the path
# serve any package as if from them.
PUBLIC_HOSTS = frozenset(
    {
        "pypi.org",
        "pypi.python.org",
        "files.pythonhosted.org",
        "download.pytorch.org",
        "conda.anaconda.org",
        "repo.anaconda.com",
        "github.com",
        "objects.githubusercontent.com",
    }
)
TORCH_NAMES = frozenset({"torch", "pytorch"})
# Distributions whose images have no apt-get: envkit's Dockerfile cannot build on them.
NOT_DEBIAN = re.compile(
    r"(?:^|/)(?:alpine|busybox|centos|fedora|rockylinux|almalinux|amazonlinux|archlinux|"
    r"opensuse[a-z/-]*|redhat/ubi[0-9]*[a-z-]*|ubi[0-9]+[a-z-]*|oraclelinux|photon|clearlinux|"
    r"gentoo[a-z/-]*|nixos/nix|alpine[a-z0-9-]*)(?::|@|$)"
)


def check_rules(spec: Spec) -> list[Rule]:
    return [
        *_team(spec),
        *_torch_elsewhere(spec),
        *_plain_http(spec),
        *_trusted_hosts(spec),
        *_mirror_paths(spec),
        *_env_and_volumes(spec),
        *_shm(spec),
        *_base(spec),
        *_platforms(spec),
    ]


def _platforms(spec: Spec) -> Iterator[Rule]:
    seen: set[str] = set()
    for index, platform in enumerate(spec.platforms or ()):
        if platform in seen:
            yield (
                ("platforms", index),
                f"{platform} is listed twice",
                "name each platform once",
                platform,
            )
        seen.add(platform)


def _team(spec: Spec) -> Iterator[Rule]:
    if spec.team.mode == "per-member" and not spec.team.members:
        yield (
            ("team", "mode"),
            "per-member mode with no members would start no container at all",
            "list the members under team.members, or use team.mode: shared",
            spec.team.mode,
        )
    yield from _member_resources(spec)
    yield from _idle_stop(spec)
    for index, member in enumerate(spec.team.members):
        if spec.team.mode == "per-member" and member.port == spec.ssh.port:
            yield (
                ("team", "members", index, "port"),
                f"member {member.name}'s port is ssh.port, the base members' own ports count from",
                f"pick another port (or leave it out: one is derived from {member.name!r})",
                member.port,
            )


def _idle_stop(spec: Spec) -> Iterator[Rule]:
    """An idle container stops by ending its own sshd; a policy that restarts every exit would
    start it again at once."""
    restart = spec.runtime.restart
    explicit = "restart" in spec.runtime.model_fields_set
    if spec.team.idle_stop is not None and explicit and restart in ("always", "unless-stopped"):
        yield (
            ("runtime", "restart"),
            f"runtime.restart: {restart} would start an idle-stopped container again at once "
            "(team.idle_stop is set)",
            "set runtime.restart: on-failure (the default with team.idle_stop), or remove "
            "team.idle_stop",
            restart,
        )


def _visible_devices_env(spec: Spec) -> Iterator[Rule]:
    assigned = spec.team.mode == "per-member" and any(m.gpus for m in spec.team.members)
    for key, value in spec.runtime.env.items():
        if assigned and key in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"):
            yield (
                ("runtime", "env", key),
                f"{key} would override the members' own GPUs (team.members[].gpus): each "
                "container sees only its member's GPUs, numbered from 0",
                f"remove {key} from runtime.env",
                value,
            )


def _member_resources(spec: Spec) -> Iterator[Rule]:
    """Per-member GPUs, CPUs and memory: only where each member has a container of their own,
    GPUs as device ids, and no GPU handed to two members unless the team says so."""
    holders: dict[str, str] = {}
    yield from _visible_devices_env(spec)
    for index, member in enumerate(spec.team.members):
        for field in ("gpus", "cpus", "memory"):
            value = getattr(member, field)
            if value is not None and spec.team.mode != "per-member":
                yield (
                    ("team", "members", index, field),
                    f"member {member.name}'s {field} needs a container of their own: shared "
                    "mode runs one container for everyone",
                    "set team.mode: per-member, or set runtime.gpus (shared mode's GPUs)",
                    list(value) if isinstance(value, tuple) else value,
                )
        if spec.team.mode != "per-member" or member.gpus is None:
            continue
        if member.gpus == "all":
            yield (
                ("team", "members", index, "gpus"),
                f"member {member.name}'s GPUs must be named or counted: with all, every member "
                "would get every GPU",
                "list device ids or GPU-UUIDs, e.g. gpus: [2, 3] (`nvidia-smi -L` lists them), "
                "or a count such as gpus: 2 (`envkit up` gives free ones)",
                member.gpus,
            )
            continue
        if member.gpus == "none" or isinstance(member.gpus, int):
            continue  # counts become ids at `envkit up`, where the host's GPUs are known
        for gpu in member.gpus:
            other = holders.get(gpu)
            if other is not None and not spec.team.share_gpus:
                yield (
                    ("team", "members", index, "gpus"),
                    f"GPU {gpu} is given to both {other} and {member.name}: their jobs would "
                    "share its memory, and one would run out",
                    "give each member other GPUs, or set team.share_gpus: true where sharing is "
                    "intended",
                    list(member.gpus),
                )
                break
            holders.setdefault(gpu, member.name)


def missing_keys(spec: Spec) -> Rule | None:
    """Checked by `envkit up` (keys are injected at run time; render and build need none)."""
    ssh = spec.ssh
    has_keys = ssh.authorized_keys or ssh.authorized_key_files or spec.team.members
    if ssh.enabled and not has_keys and not ssh.allow_no_keys:
        return (
            ("ssh",),
            "sshd would run with no public key at all: nobody could log in",
            "add ssh.authorized_key_files: [~/.ssh/id_ed25519.pub] (or team.members), or say "
            "ssh.allow_no_keys: true to add keys later",
            None,
        )
    return None


def requirement_name(text: str) -> str:
    try:
        return canonicalize_name(Requirement(text).name)
    except ValueError:
        return ""


def conda_name(text: str) -> str:
    return re.split(r"[=<>!~ ]", text.split("::")[-1], maxsplit=1)[0].lower()


def _torch_elsewhere(spec: Spec) -> Iterator[Rule]:
    fix = "set the top-level `torch:` (and `cuda:`): envkit installs, checks and pins that one"
    # packages.pip's torch is judged as a requirements file's is (plan/project/inline_pip.py)
    lists: list[tuple[Loc, tuple[str | PipPackage, ...], bool]] = [
        (("packages", "conda"), spec.packages.conda, False)
    ]
    if spec.conda is not None:
        lists += [
            (("conda", "pip"), spec.conda.pip, True),
            (("conda", "dependencies"), spec.conda.dependencies, False),
        ]
    for loc, items, is_pip in lists:
        for index, item in enumerate(items):
            text = requirement_of(item)
            name = requirement_name(text) if is_pip else conda_name(text)
            if name in TORCH_NAMES:
                yield (
                    (*loc, index),
                    "torch here would replace the torch envkit pins (its CUDA build unchecked)",
                    fix,
                    item,
                )


def _plain_http(spec: Spec) -> Iterator[Rule]:
    mirrors = spec.mirrors
    trusted = {host.split(":")[0] for host in mirrors.trusted_hosts}
    urls: list[tuple[Loc, str | None]] = [
        (("mirrors", "pip"), mirrors.pip),
        (("mirrors", "pytorch_index"), mirrors.pytorch_index),
        (("mirrors", "conda"), mirrors.conda),
        *((("mirrors", "extra_index_urls", i), u) for i, u in enumerate(mirrors.extra_index_urls)),
        *(
            (("packages", "pip", i, key), getattr(entry, key))
            for i, entry in enumerate(spec.packages.pip)
            if isinstance(entry, PipPackage)
            for key in ("index", "find_links")
        ),
    ]
    for loc, url in urls:
        if url and url.startswith("http://") and urlsplit(url).hostname not in trusted:
            yield (
                loc,
                "plain http: packages could be changed on the way, and nothing checks them",
                f"use https, or, for a mirror on your own network, opt in with "
                f"mirrors.trusted_hosts: [{urlsplit(url).hostname}]",
                url,
            )
    conda = spec.conda
    if conda is not None and conda.installer_url and not conda.installer_sha256:
        yield (
            ("conda", "installer_url"),
            "the installer runs as root in the build, and nothing checks what was downloaded",
            "add conda.installer_sha256 (`sha256sum` of the file you mean), or leave "
            "installer_url out for envkit's pinned Miniforge",
            conda.installer_url,
        )


def _trusted_hosts(spec: Spec) -> Iterator[Rule]:
    public = PUBLIC_HOSTS | preset_hosts()
    for index, host in enumerate(spec.mirrors.trusted_hosts):
        if host.split(":")[0].lower() in public:
            yield (
                ("mirrors", "trusted_hosts", index),
                "this turns off TLS checks for a public index that serves https",
                "remove it; trusted_hosts is for a mirror on your own network only",
                host,
            )


def _mirror_paths(spec: Spec) -> Iterator[Rule]:
    apt = spec.mirrors.apt
    if apt:
        last = urlsplit(apt).path.rstrip("/").rsplit("/", 1)[-1]
        if last in APT_ARCHIVES:
            root = apt.rstrip("/")[: -len(last)]
            yield (
                ("mirrors", "apt"),
                f"mirrors.apt is the mirror's root: envkit adds /{last} itself, so this "
                f"would ask for /{last}/{last}",
                f"write the root, e.g. {root}",
                apt,
            )
    conda = spec.mirrors.conda
    if conda and re.search(r"/(?:pkgs/[a-z]+|cloud(?:/[a-z-]+)?)/?$", conda):
        yield (
            ("mirrors", "conda"),
            "mirrors.conda is the Anaconda mirror's root: envkit adds pkgs/main and "
            "cloud/<channel> itself",
            "write the root, e.g. https://mirrors.tuna.tsinghua.edu.cn/anaconda",
            conda,
        )


def _env_and_volumes(spec: Spec) -> Iterator[Rule]:
    for key in spec.runtime.env:
        if key.upper().startswith("ENVKIT_"):
            yield (
                ("runtime", "env", key),
                "ENVKIT_* variables are envkit's own (the container's user, ids and keys)",
                "rename it; envkit sets these from ssh: and team:",
                key,
            )
    for index, volume in enumerate(spec.runtime.volumes):
        target = "/" + volume.split(":")[1].strip("/")
        if target == "/" or any(_overlaps(target, own) for own in OWN_FOLDERS):
            yield (
                ("runtime", "volumes", index),
                f"{target} would hide envkit's own folders ({', '.join(OWN_FOLDERS)}): "
                "keys, host keys and the entrypoint",
                "mount it somewhere else, e.g. /workspace or /data",
                volume,
            )


def _overlaps(target: str, own: str) -> bool:
    return target == own or own.startswith(target + "/") or target.startswith(own + "/")


def _shm(spec: Spec) -> Iterator[Rule]:
    runtime, verify = spec.runtime, spec.verify
    if runtime.ipc_host:
        return
    if size_bytes(verify.min_shm) > size_bytes(runtime.shm_size):
        yield (
            ("verify", "min_shm"),
            f"verify would always fail: min_shm is above runtime.shm_size ({runtime.shm_size})",
            "lower verify.min_shm or raise runtime.shm_size",
            verify.min_shm,
        )


def _base(spec: Spec) -> Iterator[Rule]:
    image = spec.base.image
    if image and NOT_DEBIAN.search(image.split("@")[0]):
        yield (
            ("base", "image"),
            "not a Debian or Ubuntu image: envkit's Dockerfile installs with apt-get",
            "use a Debian or Ubuntu based image, e.g. 'debian:bookworm' or 'ubuntu:24.04'",
            image,
        )
