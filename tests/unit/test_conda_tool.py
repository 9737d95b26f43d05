"""envkit-conda (envkit/runtime/conda_tool.py), the image's conda tool on the rattler bootstrap,
run here as the image runs it: its own process, py-rattler solving against a real channel
served on loopback (tests/conda_channel.py), the channel routed by a .condarc as envkit writes
it. The channel's python is the stand-in interpreter (a venv of this machine's python3.11)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.runtime import conda_tool
from tests.conda_channel import HELLO, conda_mirror, make_channel
from tests.e2e.mirrors import Recorder, pip_index
from tests.helpers import REPO, render_example

TOOL = REPO / "envkit" / "runtime" / "conda_tool.py"  # the stand-in python links to
# /usr/bin/python3.11, which `make test` installs (Debian's python3, with python3-torch)


@pytest.fixture(scope="module")
def channel_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conda-mirror")
    make_channel(root)
    return root


@pytest.fixture
def mirror(channel_root: Path, tmp_path: Path) -> Iterator[tuple[str, Recorder, Path]]:
    """(the mirror's root URL, what it served, a .condarc routing conda-forge through it)."""
    recorder = Recorder()
    with conda_mirror(channel_root, recorder) as url:
        rc = tmp_path / "condarc"
        rc.write_text(
            f'channels:\n  - "conda-forge"\ncustom_channels:\n  "conda-forge": "{url}/cloud"\n'
        )
        yield url, recorder, rc


def _tool(*args: str, rc: Path, cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": "/usr/bin:/bin", "CONDARC": str(rc), "CONDA_PKGS_DIRS": str(cache)}
    return subprocess.run(
        [sys.executable, str(TOOL), *args],
        capture_output=True,
        text=True,
        env={**environment, **env},
        timeout=300,
        check=False,
    )


def _names(prefix: Path) -> list[str]:
    """The packages the environment's records name."""
    return sorted(json.loads(m.read_text())["name"] for m in (prefix / "conda-meta").glob("*.json"))


def _environment(folder: Path, body: str) -> Path:
    path = folder / "environment.yml"
    path.write_text("name: t\nchannels: [conda-forge]\ndependencies:\n" + body)
    return path


def test_an_environment_file_is_solved_from_the_served_channel_and_its_pip_section_installed(
    mirror: tuple[str, Recorder, Path], tmp_path: Path
) -> None:
    url, recorder, rc = mirror
    deps = "  - python=3.11\n  - envkit-hello\n  - envkit-data\n  - pip\n  - pip:\n"
    deps += "      - envkit-probe\n"
    env_file = _environment(tmp_path, deps)
    with pip_index(Recorder(), upstream=None) as index:
        pip_conf = tmp_path / "pip.conf"
        pip_conf.write_text(f"[global]\nindex-url = {index}/simple\n")
        prefix = tmp_path / "env"
        done = _tool(
            "create", "-p", str(prefix), "-f", str(env_file),
            rc=rc, cache=tmp_path / "pkgs", PIP_CONFIG_FILE=str(pip_conf),
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    code = (
        "import sys, envkit_hello as h, envkit_probe as p; print(sys.prefix, h.SAYS, p.SERVED_BY)"
    )
    said = subprocess.run(
        [str(prefix / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    ).stdout.split(" ", 1)
    assert said[0] == str(prefix), said
    assert HELLO in said[1] and "envkit-test-index" in said[1]
    assert (prefix / "share" / "envkit-data" / "served.txt").is_file()
    served = [p for p in recorder.paths if p.endswith(".conda")]
    assert sorted(p.rsplit("/", 1)[1].split("-")[0] for p in served) == sorted(
        ["python", "pip", "envkit", "envkit"]
    ), served
    assert all(p.startswith("/cloud/conda-forge/") for p in recorder.paths), recorder.paths
    for meta in (prefix / "conda-meta").glob("*.json"):
        assert meta.stat().st_mode & 0o777 == 0o644, meta  # every member may read the records
    listed = _tool("list", "-p", str(prefix), rc=rc, cache=tmp_path / "pkgs")
    assert listed.returncode == 0 and "envkit-hello" in listed.stdout, listed.stderr
    assert f"{url}/cloud/conda-forge" in listed.stdout


def test_an_explicit_list_installs_exactly_its_packages_and_a_wrong_hash_installs_nothing(
    mirror: tuple[str, Recorder, Path], tmp_path: Path
) -> None:
    _, _, rc = mirror
    first = tmp_path / "first"
    env_file = _environment(tmp_path, "  - python=3.11\n  - envkit-hello\n")
    made = _tool("create", "-p", str(first), "-f", str(env_file), rc=rc, cache=tmp_path / "pkgs")
    assert made.returncode == 0, made.stderr
    explicit = _tool("list", "-p", str(first), "--explicit", rc=rc, cache=tmp_path / "pkgs")
    lines = explicit.stdout.splitlines()
    assert lines[0] == "@EXPLICIT" and len(lines) == 3, lines
    assert all("#" in line and len(line.split("#")[1]) == 64 for line in lines[1:])
    lock = tmp_path / "explicit.txt"
    lock.write_text(explicit.stdout)

    again = tmp_path / "again"
    copied = _tool(
        "create", "-p", str(again), "--explicit", str(lock), rc=rc, cache=tmp_path / "c2"
    )
    assert copied.returncode == 0, copied.stderr
    names = _names(again)
    assert names == ["envkit-hello", "python"]

    url = lines[1].split("#")[0]
    lock.write_text(lines[0] + "\n" + f"{url}#{'0' * 64}\n" + lines[2] + "\n")
    wrong = tmp_path / "wrong"
    refused = _tool(
        "create", "-p", str(wrong), "--explicit", str(lock), rc=rc, cache=tmp_path / "c3"
    )
    assert refused.returncode == 1
    assert url in refused.stderr and "is not the lock's" in refused.stderr, refused.stderr
    assert not (wrong / "conda-meta").exists()

    lock.write_text(f"{url}\n")
    unhashed = _tool(
        "create", "-p", str(wrong), "--explicit", str(lock), rc=rc, cache=tmp_path / "c3"
    )
    assert unhashed.returncode == 1 and ":1: " in unhashed.stderr, unhashed.stderr


def test_an_explicit_list_installs_from_a_folders_copies_with_no_channel_and_keeps_its_urls(
    channel_root: Path, tmp_path: Path
) -> None:
    """--from (an offline bundle's conda/): no channel answers (the lock's mirror is gone); each
    copy is held to its line's md5, the environment records the line's URL, and a copy with a
    byte changed is refused by name with nothing installed."""
    files = {p.name: p for p in channel_root.glob("cloud/conda-forge/*/*.conda")}
    wanted = ("python-3.11.2-envkit_shim.conda", "envkit-hello-1.0-pyh_0.conda")
    folder, lines = tmp_path / "conda", ["@EXPLICIT"]
    for name in wanted:
        subdir = files[name].parent.name
        (folder / subdir).mkdir(parents=True, exist_ok=True)
        (folder / subdir / name).write_bytes(files[name].read_bytes())
        md5 = hashlib.md5(files[name].read_bytes()).hexdigest()  # noqa: S324 - the lock's sum
        lines.append(f"http://127.0.0.1:9/gone/conda-forge/{subdir}/{name}#{md5}")
    explicit = tmp_path / "explicit.txt"
    explicit.write_text("\n".join(lines) + "\n")
    rc = tmp_path / "condarc"
    rc.write_text("channels: [conda-forge]\n")

    prefix = tmp_path / "env"
    argv = ("create", "-p", str(prefix), "--explicit", str(explicit), "--from", str(folder))
    done = _tool(*argv, rc=rc, cache=tmp_path / "pkgs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _names(prefix) == ["envkit-hello", "python"]
    recorded = {
        (meta["url"], meta["md5"], meta["channel"])
        for meta in (json.loads(m.read_text()) for m in (prefix / "conda-meta").glob("*.json"))
    }
    assert recorded == {
        (url, md5, url.rsplit("/", 2)[0] + "/")
        for url, md5 in (line.split("#") for line in lines[1:])
    }
    said = subprocess.run(
        [str(prefix / "bin" / "python"), "-c", "import envkit_hello as h; print(h.SAYS)"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert HELLO in said

    changed = folder / "noarch" / wanted[1]
    data = bytearray(changed.read_bytes())
    data[len(data) // 2] ^= 0xFF
    changed.write_bytes(bytes(data))
    other = tmp_path / "other"
    argv = ("create", "-p", str(other), "--explicit", str(explicit), "--from", str(folder))
    refused = _tool(*argv, rc=rc, cache=tmp_path / "pkgs2")
    assert refused.returncode == 1, refused.stdout
    assert f"{changed} is not" in refused.stderr and "Traceback" not in refused.stderr
    assert not (other / "conda-meta").exists()


def test_a_channel_the_condarc_does_not_route_is_refused_not_fetched_upstream(
    mirror: tuple[str, Recorder, Path], tmp_path: Path
) -> None:
    _, _, rc = mirror
    env_file = tmp_path / "environment.yml"
    env_file.write_text("channels: [bioconda]\ndependencies:\n  - python=3.11\n")
    done = _tool(
        "create", "-p", str(tmp_path / "e"), "-f", str(env_file), rc=rc, cache=tmp_path / "p"
    )
    assert done.returncode == 1
    assert "'bioconda' does not go through the mirror" in done.stderr, done.stderr
    assert "fix:" in done.stderr and "Traceback" not in done.stderr


def test_a_specs_own_channel_goes_through_the_mirror_and_install_adds_to_an_environment(
    mirror: tuple[str, Recorder, Path], tmp_path: Path
) -> None:
    _, recorder, rc = mirror
    prefix = tmp_path / "env"
    env_file = _environment(tmp_path, "  - python=3.11\n  - conda-forge::envkit-hello\n")
    assert (
        _tool(
            "create", "-p", str(prefix), "-f", str(env_file), rc=rc, cache=tmp_path / "p"
        ).returncode
        == 0
    )
    added = _tool("install", "envkit-data", rc=rc, cache=tmp_path / "p", CONDA_PREFIX=str(prefix))
    assert added.returncode == 0, added.stderr
    names = _names(prefix)
    assert names == ["envkit-data", "envkit-hello", "python"]
    assert any(p.endswith("envkit-data-2.0-0.conda") for p in recorder.paths)


def test_channel_names_resolve_as_conda_resolves_them() -> None:
    rc = {
        "custom_channels": {"conda-forge": "https://m.example/anaconda/cloud/"},
        "default_channels": ["https://m.example/anaconda/pkgs/main"],
        "channel_alias": "https://m.example/alias",
    }
    urls = conda_tool.channel_urls(
        ["conda-forge", "defaults", "nodefaults", "pytorch", "https://x.example/c/"], rc
    )
    assert urls == [
        "https://m.example/anaconda/cloud/conda-forge",
        "https://m.example/anaconda/pkgs/main",
        "https://m.example/alias/pytorch",
        "https://x.example/c",
    ]
    with pytest.raises(conda_tool.ToolError, match="'defaults' does not go through the mirror"):
        conda_tool.channel_urls(["defaults"], {"custom_channels": {}})


def test_the_pip_section_keeps_the_torch_the_environment_has(
    mirror: tuple[str, Recorder, Path], tmp_path: Path
) -> None:
    """The stand-in environment sees this machine's Debian torch (built for numpy 1): its pip
    section is constrained to keep it and numpy's major, so a line wanting numpy 2 fails there,
    naming both, instead of replacing numpy under torch."""
    _, _, rc = mirror
    deps = "  - python=3.11\n  - pip\n  - pip:\n      - envkit-probe\n      - numpy>=2\n"
    env_file = _environment(tmp_path, deps)
    with pip_index(Recorder(), upstream=None) as index:
        pip_conf = tmp_path / "pip.conf"
        pip_conf.write_text(f"[global]\nindex-url = {index}/simple\n")
        done = _tool(
            "create", "-p", str(tmp_path / "env"), "-f", str(env_file),
            rc=rc, cache=tmp_path / "pkgs", PIP_CONFIG_FILE=str(pip_conf),
        )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert "the pip section keeps torch==" in said and "numpy>=1,<2" in said, said
    assert "numpy<2,>=1" in said or "numpy>=1,<2" in said.split("keeps", 1)[1], said
    assert "pip: section failed" in said, said


def test_the_torch_layer_runs_the_tools_torch_needs() -> None:
    """One rule for what torch keeps, in one place: the image's constraints layer runs the
    program envkit-conda runs for a pip section (the tool runs in the image without envkit),
    and the build context carries that program as the package has it."""
    rendered = render_example("pytorch-2-tuna")
    assert "python /opt/envkit/programs/torch_needs.py torch==" in rendered["Dockerfile"]
    assert conda_tool.TORCH_NEEDS_PROGRAMS[0] == "/opt/envkit/programs/torch_needs.py"
    shipped = Path(conda_tool.TORCH_NEEDS_PROGRAMS[1]).read_text(encoding="utf-8")
    assert rendered["envkit/programs/torch_needs.py"] == shipped
