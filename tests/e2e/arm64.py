"""arm64 on this x86 machine, for the multi-platform tests: QEMU's user-mode emulator registered
with the kernel (and unregistered after, where the tests registered it), an arm64 Debian base
made with mmdebstrap through the emulator, and a base in the tests' registry that is one index
of the amd64 and arm64 bases, as the real GPU bases are (nvidia/cuda's tags are multi-arch).

Facts measured here (../shared/reference/arm64-here.md): binfmt_misc is not mounted at first;
`docker import` records amd64 whatever the root file system holds, so the arm64 base's config is
rewritten through the registry's API before the index names it."""

from __future__ import annotations

import base64
import hashlib
import json
import shlex
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.images import BASE_IMAGE, docker, import_rootfs, recipe_of
from tests.e2e.registry import Registry
from tests.e2e.workers import made_once

BINFMT = Path("/proc/sys/fs/binfmt_misc")
ENTRY = BINFMT / "qemu-aarch64"
ARM64_BASE = "envkit-test/debian-arm64:bookworm"
ARM64_RECIPE = "5"
# What the amd64 base has (tests/e2e/images.py), less what only its other tests use, and with
# torch from PyPI instead of Debian's python3-torch: bookworm's libtorch depends on about 300
# packages (ffmpeg, OpenCV...), and dpkg installing them under the emulator took most of ten
# minutes at 0.7 s a package (decompression was not the cost: uncompressed .debs took as long).
# PyPI's aarch64 wheels of a CPU-only torch are unpacked natively instead, by the host's uv with
# the target's platform and Python, byte-compiled by the host (bytecode is the same on every
# architecture; bookworm's Python is 3.11, as the host's).
ARM64_PACKAGES = "python3,python3-venv,openssh-server,ca-certificates,sudo"
ARM64_TORCH = ("torch==2.5.1", "numpy==1.26.4")
# py3compile and update-ca-certificates are diverted while the packages are configured
# (byte-compiling, and a process per certificate, under the emulator took minutes); the host
# does both natively at the end: its Python compiles, its update-ca-certificates (the same
# bookworm script) fills the root file system's /etc/ssl/certs, whose links are then made to
# point inside it. openssh-server's postinst makes host keys unless they exist: made natively
# first (the RSA one takes the emulator most of a minute), and deleted with the rest at the end.
DIVERTED = ("/usr/bin/py3compile", "/usr/sbin/update-ca-certificates")
NO_PY3COMPILE = "".join(
    f'chroot "$1" dpkg-divert --quiet --local --rename --add {path}; ln -s /bin/true "$1{path}"; '
    for path in DIVERTED
) + (
    'mkdir -p "$1/etc/ssh"; for t in rsa ecdsa ed25519; do '
    'ssh-keygen -q -t $t -N "" -f "$1/etc/ssh/ssh_host_${t}_key"; done'
)
RESTORE = (
    'rm -f "$1"/etc/ssh/ssh_host_*; '
    + "".join(
        f'rm -f "$1{path}"; chroot "$1" dpkg-divert --quiet --local --rename --remove {path}; '
        for path in DIVERTED
    )
    + '/usr/bin/python3 -m compileall -q -j 0 -s "$1" -p / "$1/usr/lib/python3/dist-packages" '
    '"$1/usr/lib/python3.11" || true; '
    'update-ca-certificates --fresh --certsconf "$1/etc/ca-certificates.conf" '
    '--certsdir "$1/usr/share/ca-certificates" '
    '--localcertsdir "$1/usr/local/share/ca-certificates" '
    '--etccertsdir "$1/etc/ssl/certs" --hooksdir "$1/etc/ca-certificates/update.d" > /dev/null; '
    'find "$1/etc/ssl/certs" -type l -lname "$1/*" | while read -r link; do '
    'ln -sfn "$(readlink "$link" | cut -c$((${#1} + 1))-)" "$link"; done'
)


def _torch_natively() -> str:
    """The customize hook that unpacks ARM64_TORCH into the root file system's site-packages
    for /usr/local (Debian's Python reads it), with the uv beside this test run's Python."""
    uv = shlex.quote(str(Path(sys.executable).with_name("uv")))
    wanted = " ".join(shlex.quote(r) for r in ARM64_TORCH)
    return (
        f'{uv} pip install --quiet --target "$1/usr/local/lib/python3.11/dist-packages" '
        "--python-platform aarch64-manylinux_2_28 --python-version 3.11 --only-binary :all: "
        f"--compile-bytecode {wanted}"
    )


MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"


def _registered() -> bool:
    return ENTRY.exists() and ENTRY.read_text().startswith("enabled")


@contextmanager
def qemu_aarch64() -> Iterator[None]:
    """The emulator registered for the block; a registration that was there is left alone."""
    if _registered():
        yield
        return
    if not (BINFMT / "status").exists():
        subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT)], check=True)
    subprocess.run(["update-binfmts", "--enable", "qemu-aarch64"], check=True)
    assert _registered(), "update-binfmts did not register qemu-aarch64"
    try:
        yield
    finally:
        subprocess.run(["update-binfmts", "--disable", "qemu-aarch64"], check=False)


def ensure_arm64_base() -> str:
    """The arm64 root file system as an image (made once, reused by tag while its recipe is
    current). Its metadata says amd64 (docker import): `arm64_index` corrects that."""
    if recipe_of(ARM64_BASE) == ARM64_RECIPE:
        return ARM64_BASE
    with made_once("arm64-base"):
        if recipe_of(ARM64_BASE) != ARM64_RECIPE:
            import_rootfs(
                ARM64_BASE,
                ARM64_RECIPE,
                [
                    "--variant=minbase",
                    "--architectures=arm64",
                    f"--include={ARM64_PACKAGES}",
                    f"--essential-hook={NO_PY3COMPILE}",
                    f"--customize-hook={RESTORE}",
                    f"--customize-hook={_torch_natively()}",
                ],
            )
    return ARM64_BASE


class RegistryApi:
    """The registry's HTTP API with the tests' own credentials (basic auth over loopback)."""

    def __init__(self, registry: Registry) -> None:
        self.base = f"http://{registry.address}/v2/"
        token = base64.b64encode(f"{registry.user}:{registry.password}".encode()).decode()
        self.auth = {"Authorization": f"Basic {token}"}

    def call(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[bytes, dict[str, str]]:
        url = path if path.startswith("http") else self.base + path
        request = urllib.request.Request(  # noqa: S310 - the loopback registry
            url, data=body, method=method, headers={**self.auth, **(headers or {})}
        )
        with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - loopback
            return answer.read(), dict(answer.headers)

    def manifest(self, repo: str, ref: str, accept: str = MANIFEST) -> dict[str, object]:
        raw, _ = self.call("GET", f"{repo}/manifests/{ref}", headers={"Accept": accept})
        found: dict[str, object] = json.loads(raw)
        return found

    def retag_as_arm64(self, repo: str, source: str, target: str) -> None:
        """REPO:TARGET = REPO:SOURCE with its config saying linux/arm64 (same layers)."""
        manifest = self.manifest(repo, source)
        config_ref = manifest["config"]
        assert isinstance(config_ref, dict)
        raw, _ = self.call("GET", f"{repo}/blobs/{config_ref['digest']}")
        config = json.loads(raw)
        config["architecture"], config["variant"] = "arm64", "v8"
        body = json.dumps(config).encode()
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        _, started = self.call("POST", f"{repo}/blobs/uploads/")
        location = started["Location"]
        joiner = "&" if "?" in location else "?"
        if location.startswith("/"):
            location = self.base.split("/v2/")[0] + location
        self.call(
            "PUT",
            f"{location}{joiner}digest={digest}",
            body,
            {"Content-Type": "application/octet-stream"},
        )
        manifest["config"] = {**config_ref, "digest": digest, "size": len(body)}
        self.call(
            "PUT",
            f"{repo}/manifests/{target}",
            json.dumps(manifest).encode(),
            {"Content-Type": MANIFEST},
        )


def multi_arch_base(registry: Registry, env: dict[str, str]) -> str:
    """REGISTRY/envkit-test/debian:bookworm: one index of the amd64 and arm64 bases."""
    repo = "envkit-test/debian"
    name = f"{registry.address}/{repo}"
    tags = {BASE_IMAGE: f"{name}:bookworm-amd64", ARM64_BASE: f"{name}:bookworm-arm64-imported"}
    pushes = []
    for local, tag in tags.items():  # both at once: the engine compresses each on a core
        docker("tag", local, tag)
        argv = ["docker", "push", tag]
        pushes.append(subprocess.Popen(argv, env=env, text=True, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE))  # fmt: skip
    for push, tag in zip(pushes, tags.values(), strict=True):
        _, errors = push.communicate(timeout=1200)
        assert push.returncode == 0, errors
        docker("rmi", tag)
    RegistryApi(registry).retag_as_arm64(repo, "bookworm-arm64-imported", "bookworm-arm64")
    manifest_env = {**env, "DOCKER_CLI_EXPERIMENTAL": "enabled"}
    for argv in (
        [
            "create",
            "--insecure",
            f"{name}:bookworm",
            f"{name}:bookworm-amd64",
            f"{name}:bookworm-arm64",
        ],
        ["push", "--purge", f"{name}:bookworm"],
    ):
        done = subprocess.run(
            ["docker", "manifest", *argv],
            env=manifest_env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    return f"{name}:bookworm"
