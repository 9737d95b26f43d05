"""A source package whose build needs torch (a CUDA extension: SAM 2, apex, flash-attn from
git) builds against the environment's torch release, not the newest its build-system asks
for: an extension compiled against another torch fails at import with undefined symbols.
The Dockerfile's torch layer points pip's and uv's constraint variables at the constraints
file; here the real uv builds a real source package under exactly the variables the rendered
Dockerfile sets, its build dependency served from a local folder in two releases."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import envkit

UV = Path(sys.executable).parent / "uv"
CPU = "name: app\nbase: {flavor: custom, image: 'debian:bookworm'}\nssh: {allow_no_keys: true}\n"


def write_wheel(directory: str, name: str, version: str, files: dict[str, str]) -> str:
    """A pure-Python wheel of FILES, as a build backend writes one (standard library only:
    the package's own backend below runs this same function in its build environment)."""
    import base64
    import hashlib
    import zipfile

    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(digest).rstrip(b'=').decode()},{len(text)}"
        for path, text in files.items()
        for digest in [hashlib.sha256(text.encode()).digest()]
    ]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(f"{directory}/{wheel}", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


# The package's own build backend (backend-path): its wheel records the release of
# `buildhelper` (torch's stand-in) that the build environment imported.
BACKEND = f"""
import buildhelper
{inspect.getsource(write_wheel)}
def get_requires_for_build_wheel(config_settings=None):
    return []
def build_wheel(directory, config_settings=None, metadata_directory=None):
    made = {{"needsit/built_with.txt": buildhelper.VERSION}}
    return write_wheel(directory, "needsit", "0.1", made)
"""


def _built_with(tmp_path: Path, variables: list[str], run: str) -> str:
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("buildhelper==1.0\n")  # as torch_needs.py pins the image's torch
    target = tmp_path / run
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env |= {name: str(constraints) for name in variables}
    env |= {"UV_CACHE_DIR": str(tmp_path / f"cache-{run}")}
    done = subprocess.run(
        [str(UV), "pip", "install", "--no-index", "--find-links", str(tmp_path / "wheels"),
         "--target", str(target), str(tmp_path / "needsit")],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return (target / "needsit" / "built_with.txt").read_text()


def test_a_source_build_gets_the_environments_torch_release_not_the_newest(
    tmp_path: Path,
) -> None:
    project = tmp_path / "app"
    project.mkdir()
    (project / "envkit.yaml").write_text(CPU)
    rendered = envkit("render", cwd=project)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    dockerfile = (project / ".envkit" / "Dockerfile").read_text()
    pinned = dockerfile.split("ENV PIP_CONSTRAINT=", 1)[1].split("\n\n", 1)[0]
    variables = ["PIP_CONSTRAINT"] + [
        line.strip().split("=", 1)[0] for line in pinned.splitlines()[1:] if "=" in line
    ]
    assert "UV_BUILD_CONSTRAINT" in variables, pinned
    (tmp_path / "wheels").mkdir()
    for version in ("1.0", "2.0"):
        made = {"buildhelper/__init__.py": f"VERSION = {version!r}\n"}
        write_wheel(str(tmp_path / "wheels"), "buildhelper", version, made)
    source = tmp_path / "needsit"
    source.mkdir()
    (source / "backend.py").write_text(BACKEND)
    (source / "pyproject.toml").write_text(
        '[project]\nname = "needsit"\nversion = "0.1"\n[build-system]\n'
        'requires = ["buildhelper>=1.0"]\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    assert _built_with(tmp_path, variables, "as-the-image") == "1.0"
    # without the build's own constraint, uv builds against the newest release it can find
    assert _built_with(tmp_path, ["UV_CONSTRAINT"], "installs-only") == "2.0"
