"""Whole-image locks on the real engine: build -> lock -> build --locked gives an identical lock
(apt packages the build added pinned, pip installed --no-deps --require-hashes with PyPI's real
sums); a package changed inside a running container fails system.lock and shows in `envkit
diff`; a version the mirror no longer serves fails the locked build naming it; a lock for
another config or another base is refused before anything is written."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.checks.programs.lockfile import parse_lock
from tests.e2e.conftest import StartContainer
from tests.e2e.images import E2E_NAME, docker
from tests.helpers import envkit, statuses, verify_report

LOCKED_TAG = f"envkit/{E2E_NAME}:locked"


def _content(lock: Path) -> list[str]:
    return [line for line in lock.read_text().splitlines() if not line.startswith("#")]


@pytest.fixture(scope="module")
def first_lock(env_image: str, project_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    lock = tmp_path_factory.mktemp("lock") / "envkit.lock"
    done = envkit("lock", "--lock-file", str(lock), cwd=project_dir, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 from a pip index (3 with the index's sha256)" in done.stdout, done.stdout
    return lock


@pytest.fixture(scope="module")
def locked_image(first_lock: Path, project_dir: Path) -> Iterator[str]:
    done = envkit(
        "build",
        "--quiet",
        "--locked",
        "--lock-file",
        str(first_lock),
        "--tag",
        LOCKED_TAG,
        cwd=project_dir,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    yield LOCKED_TAG
    docker("rmi", "-f", LOCKED_TAG, check=False)
    envkit("render", cwd=project_dir)  # the shared project's context back to unlocked


def test_the_sbom_from_the_lock_is_valid_and_holds_all_syft_finds_or_names_each_difference(
    first_lock: Path, project_dir: Path, tmp_path: Path
) -> None:
    """The CPU example's image: CycloneDX 1.6 from its lock, held against syft's own scan (the
    real scanner, from PyPI); SPDX 2.3 from the same lock, the same bytes twice."""
    import json
    import re

    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    cdx = tmp_path / "sbom.cdx.json"
    args = ("sbom", "--lock-file", str(first_lock))
    done = envkit(*args, "-o", str(cdx), "--syft", cwd=project_dir, timeout=900)
    said = done.stdout + done.stderr
    assert done.returncode in (0, 1) and "Traceback" not in said, said
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(cdx.read_text()) is None
    components = json.loads(cdx.read_text())["components"]
    lock = parse_lock(first_lock.read_text())
    locked = sum(len(lock[section]) for section in ("apt", "conda", "pip"))
    assert len(components) == locked + 1, (len(components), locked)  # + the base image
    summary = re.search(r"syft found (\d+) packages in \S+; (\d+) differ", said)
    assert summary and int(summary.group(1)) > 100, said
    differing = [line.strip() for line in said.splitlines() if line.startswith("  ")]
    assert len(differing) == int(summary.group(2)) and done.returncode == (1 if differing else 0)
    shapes = (r"\S+ \S+ \S+: found by syft at .+, not in the lock: .+", r"\S+ \S+: syft read .+")
    assert all(any(re.fullmatch(s, line) for s in shapes) for line in differing), differing
    assert not any(line.startswith("apt ") for line in differing), "dpkg's database is the lock's"
    # A Python package of the environment missing from the lock would be a real gap: the only
    # ones allowed are vendored copies, or envkit's own build tools under /opt/envkit (uv).
    python = [line for line in differing if line.startswith("python ")]
    allowed = ("vendored inside another package", "found by syft at /opt/envkit/")
    assert all(any(a in line for a in allowed) for line in python), python

    spdx = [tmp_path / "one.spdx.json", tmp_path / "two.spdx.json"]
    for path in spdx:
        made = envkit(*args, "-o", str(path), cwd=project_dir, env={"SOURCE_DATE_EPOCH": "0"})
        assert made.returncode == 0, made.stderr
    assert spdx[0].read_bytes() == spdx[1].read_bytes()
    assert json.loads(spdx[0].read_text())["spdxVersion"] == "SPDX-2.3"


def test_the_lock_pins_what_the_build_added(first_lock: Path) -> None:
    lines = _content(first_lock)
    assert lines[0] == "schema 1"
    jq = [line for line in lines if line.startswith("jq:")]
    assert len(jq) == 1 and jq[0].endswith(" added"), jq  # not in the base: pinned
    assert any(line.startswith("libc6:") and line.endswith(" base") for line in lines)
    tqdm = next(line for line in lines if line.startswith("tqdm "))
    assert " uv sha256:" in tqdm  # installed by uv, with PyPI's own sums for that version


def test_a_locked_rebuild_holds_exactly_the_locked_set(
    locked_image: str, first_lock: Path, project_dir: Path, tmp_path: Path
) -> None:
    dockerfile = (project_dir / ".envkit" / "Dockerfile").read_text()
    jq = next(line for line in _content(first_lock) if line.startswith("jq:"))
    assert f"jq={jq.split()[1]}" in dockerfile
    assert "--no-deps --require-hashes" in dockerfile
    second = tmp_path / "second.lock"
    done = envkit("lock", "--tag", locked_image, "--lock-file", str(second), cwd=project_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert second.read_bytes() == first_lock.read_bytes()  # byte for byte
    shipped = docker("run", "--rm", "--entrypoint", "cat", locked_image, "/etc/envkit/envkit.lock")
    assert shipped.stdout == first_lock.read_text()


def test_a_package_changed_in_a_running_box_fails_the_lock_check(
    locked_image: str, start_container: StartContainer, project_dir: Path, first_lock: Path
) -> None:
    name = start_container(locked_image)
    code, report = verify_report(
        project_dir, "--target", f"docker://{name}", "--only", "system.lock"
    )
    assert code == 0 and statuses(report)["system.lock"] == "pass", report
    docker("exec", name, "python", "-m", "pip", "install", "-q", "tqdm==4.66.0")
    code, report = verify_report(
        project_dir, "--target", f"docker://{name}", "--only", "system.lock"
    )
    row = report["targets"][0]["checks"][0]
    assert code == 1 and row["status"] == "fail", row
    assert "pip tqdm" in row["message"] and "-> 4.66.0" in row["message"]
    diffed = envkit("diff", str(first_lock), f"docker://{name}", cwd=project_dir)
    assert diffed.returncode == 1, diffed.stdout + diffed.stderr
    assert any(
        line.split()[:2] == ["pip", "tqdm"] and line.split()[-1] == "4.66.0"
        for line in diffed.stdout.splitlines()
    ), diffed.stdout


def test_a_version_no_longer_served_fails_the_locked_build_naming_it(
    env_image: str, first_lock: Path, project_dir: Path, tmp_path: Path
) -> None:
    stale = tmp_path / "stale.lock"
    text = first_lock.read_text()
    jq = next(line for line in text.splitlines() if line.startswith("jq:"))
    stale.write_text(text.replace(jq, f"{jq.split()[0]} 0.0-planted added"))
    done = envkit(
        "build",
        "--locked",
        "--lock-file",
        str(stale),
        "--tag",
        f"envkit/{E2E_NAME}:stale",
        cwd=project_dir,
    )
    docker("rmi", "-f", f"envkit/{E2E_NAME}:stale", check=False)
    envkit("render", cwd=project_dir)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "the lock pins jq 0.0-planted" in done.stdout + done.stderr


def test_a_lock_for_another_config_or_base_is_refused_before_anything_is_written(
    env_image: str, first_lock: Path, project_dir: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(project_dir, other, ignore=shutil.ignore_patterns(".envkit"))
    config = other / "envkit.yaml"
    config.write_text(config.read_text().replace("pip: [tqdm]", "pip: [tqdm, six]"))
    done = envkit("build", "--locked", "--lock-file", str(first_lock), cwd=other)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "asks for pip:six" in done.stderr and "envkit lock" in done.stderr
    assert not (other / ".envkit").exists()
    refused = envkit("lock", "--lock-file", str(tmp_path / "x.lock"), cwd=other)
    assert refused.returncode == 2 and "built from another envkit.yaml" in refused.stderr
    assert not (tmp_path / "x.lock").exists()

    same = tmp_path / "same"
    shutil.copytree(project_dir, same, ignore=shutil.ignore_patterns(".envkit"))
    moved = tmp_path / "moved.lock"
    text = first_lock.read_text()
    base_id = next(line for line in text.splitlines() if line.startswith("id sha256:"))
    moved.write_text(text.replace(base_id, "id sha256:" + "0" * 64))
    again = envkit("build", "--locked", "--lock-file", str(moved), cwd=same)
    assert again.returncode == 2 and "was made on sha256:000" in again.stderr, again.stderr
    assert not (same / ".envkit").exists()


INJECTED = "-oDPkg::Pre-Invoke::=touch${IFS}/tmp/pwned"


@pytest.mark.docker
def test_a_lock_entry_carrying_an_apt_option_never_acts(
    first_lock: Path, project_dir: Path, tmp_path: Path
) -> None:
    """The real lock with one apt entry turned into an apt option: refused, line named, nothing
    built. And the apt line envkit renders ends its options with `--`, so even such a token
    would be a package name to apt, tried here in a real container."""
    lines = first_lock.read_text().splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("jq:"))
    version = lines[at].split()[1]
    lines[at] = f"{INJECTED}:amd64 {version} added"
    hostile = tmp_path / "envkit.lock"
    hostile.write_text("\n".join(lines) + "\n")
    tag = f"envkit/{E2E_NAME}:injected"
    done = envkit("build", "--locked", "--lock-file", str(hostile), "--tag", tag, cwd=project_dir)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{hostile}:{at + 1}:" in done.stderr and "is not a Debian package" in done.stderr
    assert docker("image", "inspect", tag, check=False).returncode != 0, "nothing was built"
    dockerfile = (project_dir / ".envkit" / "Dockerfile").read_text()
    assert "apt-get install -y --no-install-recommends -- \\" in dockerfile
    tried = docker(
        "run", "--rm", "--network", "none", "--entrypoint", "sh", "envkit-test/debian:bookworm",
        "-c", f"apt-get install -y --no-install-recommends -- '{INJECTED}' ; test ! -e /tmp/pwned",
        check=False,
    )  # fmt: skip
    assert tried.returncode == 0, (
        "the option acted: /tmp/pwned exists\n" + tried.stdout + tried.stderr
    )
    assert "Unable to locate package" in tried.stdout + tried.stderr
