"""Many targets at once on the real engine: seven containers (one stopped on purpose, one whose
python hangs) plus one of them again over SSH, verified concurrently from a targets file. The
down and the hung target are reported; the others are verified all the same; the HTML report of
the run is opened in a real headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser import browser, drawn_boxes
from tests.e2e.conftest import StartContainer, ssh_port
from tests.e2e.images import docker, stall_python
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]
DEADLINE_S = 75
LIGHT = ("--only", "tensor.creation", "--only", "autograd.seed_examples")


@pytest.fixture
def hung_container(env_image: str, start_container: StartContainer) -> str:
    """A container whose `python3` never returns: the per-target deadline has to end it."""
    name = start_container(env_image)
    stall_python(name, 600)
    return name


def test_seven_containers_at_once_with_one_down_and_one_hung(
    env_image: str,
    start_container: StartContainer,
    hung_container: str,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    healthy = [start_container(env_image, publish_ssh=(i == 0)) for i in range(5)]
    stopped = start_container(env_image)
    docker("stop", "-t", "1", stopped)
    ssh_url = (
        f"ssh://dev@127.0.0.1:{ssh_port(healthy[0])}?identity={project_dir / 'id_test'}"
        f"&known_hosts={tmp_path / 'known_hosts'}"
    )
    urls = [f"docker://{n}" for n in healthy] + [
        f"docker://{stopped}",
        f"docker://{hung_container}",
        ssh_url,
    ]
    listing = tmp_path / "targets.txt"
    listing.write_text(
        "# the team's GPU boxes\n" + "\n".join(f"{u}  # target {i}" for i, u in enumerate(urls))
    )
    # The deadline is generous: under a loaded CI machine four torch imports at once over a
    # fuse-overlayfs engine took more than 20 s (healthy targets then read as hung). Only the
    # hung target, whose python sleeps 600 s, may reach it.
    done = envkit(
        "verify", "--targets", str(listing), *LIGHT, "--parallel", "4",
        "--target-timeout", str(DEADLINE_S), "--json-file", "fleet.json", "--html", "fleet.html",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    report = json.loads((tmp_path / "fleet.json").read_text())

    verified = {r["target"]: r for r in report["targets"]}
    assert set(verified) == {*(f"docker://{n}" for n in healthy), ssh_url}
    for target in verified.values():
        statuses = {c["id"]: c["status"] for c in target["checks"]}
        assert statuses == {"tensor.creation": "pass", "autograd.seed_examples": "pass"}
    down = {u["target"]: u["message"] for u in report["unreachable"]}
    assert "is exited" in down[f"docker://{stopped}"]
    assert f"within {DEADLINE_S}s" in down[f"docker://{hung_container}"]
    rows = report["per_target"]
    assert [r["target"] for r in rows if r["state"] == "passed"] == [*urls[:5], ssh_url]
    assert {r["target"] for r in rows if r["state"] == "unreachable"} == set(urls[5:7])
    assert report["summary"]["targets"] == 8 and report["summary"]["pass"] == 12
    assert "per target" in done.stdout and "unreachable" in done.stdout

    with browser() as driver:
        driver.get((tmp_path / "fleet.html").as_uri())
        matrix = driver.find_element("id", "matrix").find_elements("tag name", "tr")
        assert len(matrix) == 3 and len(matrix[0].find_elements("tag name", "th")) == 1 + 6
        assert len(driver.find_element("id", "targets").find_elements("tag name", "tr")) == 9
        assert len(driver.find_elements("css selector", "p.unreachable")) == 2
        assert all(b["width"] > 0 for b in drawn_boxes(driver, "#chart-durations rect.bar"))
