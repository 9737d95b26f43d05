"""No routine command loses a file a member wrote (issue 35), on the real engine, through
compose and through Podman's API (the SDK path): homes on volumes survive `down`+`up`, a
container stopped behind envkit's back, a rebuilt image and a member leaving and rejoining; a
recreate that would lose hand-installed packages is named and refused without --yes;
`down --volumes` without confirmation deletes nothing; backup -> remove -> restore gives the
same files (sha256) and owners."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import ENV_IMAGE
from tests.e2e.engines import PodmanEngine, podman_engine  # noqa: F401 - a fixture
from tests.e2e.images import E2E_NAME, E2E_PORT, TEST_LABEL, copy_project, docker
from tests.helpers import envkit, free_port

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BLOB = "head -c 200000 /dev/urandom > ~/work.bin && sha256sum ~/work.bin"


def _rebuilt(tag: str, engine: PodmanEngine | None = None) -> None:
    """The project's image rebuilt (a new image id under the same tag), as a package added to
    envkit.yaml would make it: built FROM the old one, a layer more."""
    steps = f"FROM {tag}\nRUN echo rebuilt > /etc/envkit-rebuilt\nLABEL {TEST_LABEL}=rebuilt\n"
    if engine is None:
        subprocess.run(["docker", "build", "-q", "-t", tag, "-"], input=steps, text=True,
                       capture_output=True, check=True)  # fmt: skip
    else:
        subprocess.run(["podman", *engine.storage, "build", "-q", "-t", tag, "-f", "-"],
                       input=steps, text=True, capture_output=True, check=True)  # fmt: skip


class Box:
    """A project and the engine it runs on: envkit's commands and a shell in its containers."""

    def __init__(self, folder: Path, env: dict[str, str], engine: PodmanEngine | None) -> None:
        self.folder, self.env, self.engine = folder, env, engine

    def envkit(self, *args: str) -> subprocess.CompletedProcess[str]:
        return envkit(*args, cwd=self.folder, env=self.env)

    def ok(self, *args: str) -> str:
        done = self.envkit(*args)
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
        return done.stdout

    def run(self, container: str, user: str, script: str) -> str:
        tool = ["podman", *self.engine.storage] if self.engine else ["docker"]
        done = subprocess.run([*tool, "exec", "-u", user, container, "sh", "-c", script],
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, (script, done.stderr)
        return done.stdout.strip()

    def engine_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        tool = ["podman", *self.engine.storage] if self.engine else ["docker"]
        return subprocess.run([*tool, *args], capture_output=True, text=True, timeout=300)


def _project(source: Path, folder: Path, name: str, team: bool) -> None:
    config = copy_project(source, folder)
    text = config.read_text().replace(f"name: {E2E_NAME}", f"name: {name}")
    text = text.replace(f"port: {E2E_PORT}", f"port: {free_port()}")
    if team:
        key = (folder / "id_test.pub").read_text().strip()
        text += f"team:\n  mode: per-member\n  members:\n    - name: alice\n      keys: ['{key}']\n"
        text += f"    - name: bob\n      keys: ['{key}']\n"
    config.write_text(text)


@pytest.fixture(params=["compose", "podman"])
def box(
    request: pytest.FixtureRequest, env_image: str, project_dir: Path, tmp_path: Path
) -> Iterator[Box]:
    name = f"envkit-keep-{request.param}"
    _project(project_dir, tmp_path, name, team=True)
    tag = f"envkit/{name}:latest"
    engine = None
    if request.param == "podman":
        engine = request.getfixturevalue("podman_engine")
        _loaded_into_podman(engine.storage)
        subprocess.run(["podman", *engine.storage, "tag", ENV_IMAGE, tag], check=True)
        env = {"DOCKER_HOST": engine.url}
    else:
        docker("tag", ENV_IMAGE, tag)
        env = {}
    made = Box(tmp_path, env, engine)
    yield made
    made.envkit("down", "--volumes", "--yes")
    made.engine_cli("rmi", "-f", tag)


def _loaded_into_podman(storage: tuple[str, ...]) -> None:
    """The session image in Podman's storage, loaded (1.5 GB through `docker save`) only where
    Podman does not hold that very image yet (the same ID: its config's digest)."""
    wanted = docker("image", "inspect", "-f", "{{.Id}}", ENV_IMAGE).stdout.strip()
    held = subprocess.run(["podman", *storage, "image", "inspect", "-f", "{{.Id}}", ENV_IMAGE],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if held.returncode == 0 and wanted.removeprefix("sha256:") == held.stdout.strip():
        return
    with subprocess.Popen(["docker", "save", ENV_IMAGE], stdout=subprocess.PIPE) as saved:
        subprocess.run(["podman", *storage, "load"], stdin=saved.stdout,
                       capture_output=True, check=True, timeout=600)  # fmt: skip


def _name(box: Box) -> str:
    config = (box.folder / "envkit.yaml").read_text().splitlines()
    return next(line for line in config if line.startswith("name: ")).split()[1]


def test_homes_survive_down_stop_rebuild_and_a_member_leaving_and_rejoining(box: Box) -> None:
    project = _name(box)
    alice, bob = f"{project}-alice", f"{project}-bob"
    box.ok("up")
    wrote = box.run(alice, "alice", BLOB)
    box.run(bob, "bob", "echo bob > ~/notes.txt")
    # down and up: new containers, the same homes
    box.ok("down")
    box.ok("up")
    assert box.run(alice, "alice", "sha256sum ~/work.bin") == wrote
    # stopped behind envkit's back: started as it is (its layer too), not recreated
    box.run(alice, "root", "echo layer > /srv/kept")
    box.engine_cli("stop", alice)
    box.ok("up")
    assert box.run(alice, "alice", "cat /srv/kept && sha256sum ~/work.bin").endswith(wrote)
    # a rebuilt image: a hand-installed package is named, and nothing is recreated without --yes
    box.run(alice, "root", "touch /var/lib/dpkg/info/htop.list")
    _rebuilt(f"envkit/{project}:latest", box.engine)
    refused = box.envkit("up")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "alice changed 1 apt package (htop)" in refused.stderr
    assert "--keep-running alice" in refused.stderr
    assert box.run(alice, "root", "cat /srv/kept") == "layer", "nothing recreated"
    box.ok("up", "--yes")
    assert box.run(alice, "alice", "cat /etc/envkit-rebuilt && sha256sum ~/work.bin").endswith(
        wrote
    )
    # bob leaves: his container goes, his home stays and is listed; he rejoins to it
    config = box.folder / "envkit.yaml"
    full = config.read_text()
    config.write_text(full.split("    - name: bob")[0])
    box.ok("up")
    status = box.ok("status")
    assert "home of bob, who is no longer in team.members" in status, status
    config.write_text(full)
    box.ok("up")
    assert box.run(bob, "bob", "cat ~/notes.txt") == "bob"


def test_down_volumes_deletes_nothing_unconfirmed_and_backup_restore_is_exact(box: Box) -> None:
    project = _name(box)
    alice = f"{project}-alice"
    box.ok("up")
    box.run(alice, "alice", BLOB + " && mkdir -p ~/proj && echo a > ~/proj/a && chmod 640 ~/proj/a")
    listing = "cd ~ && find . -type f -exec sha256sum {} + | sort && stat -c '%n %U %a' proj/a"
    before = box.run(alice, "alice", listing)
    refused = box.envkit("down", "--volumes")
    assert refused.returncode == 2 and "nothing was deleted" in refused.stderr, refused.stderr
    assert f"{project}_{alice}-home" in refused.stderr
    volumes = box.engine_cli("volume", "ls", "-q").stdout
    assert f"{project}_{alice}-home" in volumes
    backups = box.folder / "backups"
    box.ok("backup", "alice", "--to", str(backups))
    archive = next(backups.glob("*.tar.gz"))
    manifest = archive.with_name(archive.name.removesuffix(".tar.gz") + ".json").read_text()
    assert hashlib.sha256(archive.read_bytes()).hexdigest() in manifest
    # alice leaves; her home is deleted by name only (with its backup), then restored
    config = box.folder / "envkit.yaml"
    config.write_text(config.read_text().replace("    - name: alice", "    - name: carol", 1))
    box.ok("up")
    kept = box.envkit("member", "remove", "alice", "--delete-home")
    assert kept.returncode == 2 and "nothing was deleted" in kept.stderr
    box.ok("member", "remove", "alice", "--delete-home", "--yes", "--no-backup")
    assert f"{project}_{alice}-home" not in box.engine_cli("volume", "ls", "-q").stdout
    config.write_text(config.read_text().replace("    - name: carol", "    - name: alice", 1))
    box.ok("restore", str(archive))
    again = box.envkit("restore", str(archive))
    assert again.returncode == 2 and "already holds files" in again.stderr
    box.ok("up")
    assert box.run(alice, "alice", listing) == before
