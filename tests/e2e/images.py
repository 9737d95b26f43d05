"""Images the end-to-end tests build on this registry-less engine.

The base (`envkit-test/debian:bookworm`, Debian + python3-torch, made with mmdebstrap) is
expensive and kept by tag for reuse; everything built on it is labelled and removed afterwards."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.e2e.workers import made_once, own_name, port

TEST_LABEL = "io.envkit.test"
BASE_IMAGE = "envkit-test/debian:bookworm"
BASE_PACKAGES = (
    "python3,python3-torch,python3-numpy,python3-venv,python3-pytest,openssh-server,"
    "ca-certificates,sudo,git"
)
HOST_CAS = Path("/usr/local/share/ca-certificates")


def docker(
    *args: str, check: bool = True, timeout: float = 1800
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, check=check, timeout=timeout
    )


# Like the real GPU bases, the test base carries no sshd host keys (openssh-server makes them at
# install; a lower layer keeps them even after envkit deletes them). Bump RECIPE when this changes:
# an image made by an older recipe is rebuilt.
CUSTOMIZE = 'rm -f "$1"/etc/ssh/ssh_host_*'
RECIPE = "2"


def image_exists(tag: str) -> bool:
    return docker("image", "inspect", tag, check=False).returncode == 0


def recipe_of(tag: str) -> str | None:
    done = docker(
        "image",
        "inspect",
        "-f",
        '{{index .Config.Labels "io.envkit.test.recipe"}}',
        tag,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def import_rootfs(tag: str, recipe: str, mmdebstrap_options: list[str]) -> None:
    """A bookworm root file system made by mmdebstrap with these options, streamed into
    `docker import` as TAG, labelled as the tests' base of RECIPE."""
    rootfs = subprocess.Popen(
        # dpkg's fsync after every file only slows a root file system that is streamed away
        ["mmdebstrap", "--dpkgopt=force-unsafe-io", *mmdebstrap_options, "bookworm", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    imported = subprocess.run(
        [
            "docker",
            "import",
            "--change",
            f"LABEL {TEST_LABEL}=base",
            "--change",
            f"LABEL io.envkit.test.recipe={recipe}",
            "--change",
            'CMD ["bash"]',
            "-",
            tag,
        ],
        stdin=rootfs.stdout,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert rootfs.stdout is not None
    rootfs.stdout.close()
    rootfs.wait()
    if rootfs.returncode != 0 or imported.returncode != 0:
        raise RuntimeError(f"could not make {tag}: {imported.stderr}")


def ensure_base_image() -> str:
    """Make the base image once (one worker makes it, the others wait); later runs reuse it by
    tag while its recipe is current."""
    if recipe_of(BASE_IMAGE) == RECIPE:
        return BASE_IMAGE
    if shutil.which("mmdebstrap") is None:
        raise RuntimeError(
            "mmdebstrap is needed to make the test base image: `make test` installs it"
        )
    with made_once("base-image"):
        if recipe_of(BASE_IMAGE) != RECIPE:
            import_rootfs(
                BASE_IMAGE,
                RECIPE,
                [
                    "--variant=minbase",
                    f"--include={BASE_PACKAGES}",
                    f"--customize-hook={CUSTOMIZE}",
                ],
            )
    return BASE_IMAGE


# The e2e project: several files build on it, up it or push it, so each worker has its own.
E2E_NAME = own_name("envkit-e2e")
E2E_PORT = port(18822)


def project_config(directory: Path, extra: str = "") -> Path:
    """The Debian CPU example (`cuda: cpu`), on the local base, trusting the host's extra CAs
    (a TLS-inspecting egress on the machines that run these tests), with a test key."""
    cas = sorted(HOST_CAS.glob("*.crt")) if HOST_CAS.is_dir() else []
    for ca in cas:
        shutil.copy(ca, directory / ca.name)
    ca_line = f"  ca_certificates: [{', '.join(c.name for c in cas)}]\n" if cas else ""
    config = directory / "envkit.yaml"
    config.write_text(
        f"name: {E2E_NAME}\n"
        f"base:\n  flavor: custom\n  image: {BASE_IMAGE}\n"
        'cuda: "cpu"\n'  # a CPU box: the base's own (CPU) torch, no GPU asked or checked
        "packages:\n  apt: [python3-torch, python3-numpy, python3-pytest, git, jq]\n  pip: [tqdm]\n"
        f"mirrors:\n  preset: official\n{ca_line}"
        f"ssh:\n  port: {E2E_PORT}\n  bind: 127.0.0.1\n  uid: 1000\n  gid: 1000\n"
        "  authorized_key_files: [id_test.pub]\n"
        "runtime:\n  gpus: none\n  shm_size: 2gb\n"
        "verify:\n  require_gpu: false\n" + extra
    )
    if not (directory / "id_test").exists():
        subprocess.run(
            [
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "e2e@test",
                "-f",
                str(directory / "id_test"),
            ],
            check=True,
        )
    return config


def copy_project(source: Path, target: Path) -> Path:
    """The e2e project's config, keys and CA files, copied for a test that changes them."""
    for item in source.iterdir():
        if item.is_file() and item.suffix in ("", ".crt", ".pub", ".yaml"):
            shutil.copy(item, target / item.name)
    return target / "envkit.yaml"


def keypair(directory: Path, name: str) -> str:
    """A fresh ed25519 key pair DIRECTORY/NAME(.pub); returns the public key line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(directory / name)],
        check=True,
    )
    return (directory / f"{name}.pub").read_text().strip()


def stall_python(container: str, seconds: int) -> None:
    """Replace the container's python3 (where its PATH finds it, so an SSH login that gets the
    image's PATH finds it too) with one that records its pid in /tmp/slow.pid and sleeps: a
    verify run is then under way (its files in /tmp, its processes running) but never answers."""
    docker(
        "exec", container, "sh", "-c",
        'p=$(command -v python3) && mv "$p" "$p.real" '
        f"&& printf '#!/bin/sh\\necho $$ > /tmp/slow.pid\\nexec sleep {seconds}\\n' > \"$p\" "
        '&& chmod 0755 "$p"',
    )  # fmt: skip


CUDA_PROJECT = "envkit-e2e-cuda"
CUDA_IMAGE = f"envkit/{CUDA_PROJECT}:latest"


def newest_pypi_torch() -> tuple[str, str]:
    """The newest torch release in envkit's table and PyPI's CUDA build of it."""
    from envkit.catalog.compat import load_table, version_key

    table = load_table()
    newest = max(table.torch, key=version_key)
    cuda = table.torch[newest].default_cuda
    assert cuda is not None, f"PyPI's torch {newest} is not a CUDA build"
    return newest, cuda


def cuda_project_config(directory: Path) -> Path:
    """A CUDA image made here without a registry: the local Debian base, the newest torch from
    the pip index (PyPI's wheel is a CUDA build; its CUDA libraries come as nvidia-* wheels) and
    SSH. The spec asks for GPUs, which this engine cannot give."""
    torch, cuda = newest_pypi_torch()
    cas = sorted(HOST_CAS.glob("*.crt")) if HOST_CAS.is_dir() else []
    for ca in cas:
        shutil.copy(ca, directory / ca.name)
    ca_line = f"  ca_certificates: [{', '.join(c.name for c in cas)}]\n" if cas else ""
    config = directory / "envkit.yaml"
    config.write_text(
        f"name: {CUDA_PROJECT}\n"
        f"base:\n  flavor: custom\n  image: {BASE_IMAGE}\n"
        f'torch: "{torch}"\ncuda: "{cuda}"\ntorch_source: pypi\n'
        f"mirrors:\n  preset: official\n{ca_line}"
        f"ssh:\n  port: {port(18823)}\n  authorized_keys: ['ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIC7DCI7dF0oKzaNKmAZUcryr0YO3pA8ZO+y+PH2pK/md e2e@test']\n"
        "runtime:\n  gpus: all\n"
    )
    return config
