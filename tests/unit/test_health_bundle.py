"""`envkit health --program PATH --bundle DIR`: what the program says to the node's shell, and
what is refused before anything is written. (Run for real on a Slurm node through ch-run in
tests/e2e/test_bundle.py.)"""

from __future__ import annotations

import shlex
from pathlib import Path

from envkit.bundle.health import through_ch_run
from tests.helpers import envkit


def test_the_program_runs_the_check_in_the_image_and_drains_outside_it() -> None:
    image, checks = Path("/shared/nlp/rootfs.sqfs"), Path("/etc/slurm/envkit-health.zip")
    args = ["health", "--timeout", "50", "--config", '{"min_shm": "1gb"}']
    body = through_ch_run(image, "/opt/venv/bin/python", checks, args, True, "gpu 7;reboot")
    check = next(line for line in body.splitlines() if line.startswith("line=$("))
    argv = shlex.split(check[len("line=$(") : -1])
    assert argv[:6] == [
        "ch-run",
        "--bind",
        "/etc/slurm:/mnt",
        "--unset-env=*",
        "--set-env",
        str(image),
    ]
    assert argv[6:9] == ["--", "/opt/venv/bin/python", "/mnt/envkit-health.zip"]
    assert argv[9:] == args  # the config's JSON one word, as the check reads it
    # A node name from --node is one quoted word; the reason is the check's line, one word.
    assert "scontrol update nodename='gpu 7;reboot' state=drain reason=\"$line\"" in body
    assert body.rstrip().endswith("exit 1")
    # ch-run or the python missing (126, 127) is the program's setup: no node drained for it.
    assert body.index('[ "$status" -ge 126 ]') < body.index("scontrol")
    quiet = through_ch_run(image, "python", checks, args, False, None)
    assert "scontrol" not in quiet and '[ "$status" -eq 0 ] && exit 0' in quiet


def test_a_bundle_program_is_refused_for_gpus_and_without_program(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    alone = envkit("health", "--bundle", str(bundle), cwd=tmp_path)
    assert alone.returncode == 2 and "add --program PATH" in alone.stderr, alone.stderr
    (tmp_path / "envkit.yaml").write_text(
        "name: gpus\nssh:\n  allow_no_keys: true\nverify:\n  require_gpu: true\n"
    )
    program = tmp_path / "out" / "envkit-health"
    gpu = envkit("health", "--program", str(program), "--bundle", str(bundle), cwd=tmp_path)
    assert gpu.returncode == 2 and "this config requires a GPU" in gpu.stderr, gpu.stderr
    assert "Traceback" not in gpu.stderr and not (tmp_path / "out").exists()
