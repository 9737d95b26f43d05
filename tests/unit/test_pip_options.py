"""Per-package pip options (issue 29): a package built without isolation (flash-attn's case) or
taken from a private index gets a layer of its own after the other Python packages; the index's
credentials never come from envkit.yaml (refused there, and never shown back), only from the
building machine's netrc, which reaches BuildKit as a secret mount."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.engine.build import BuildOptions
from envkit.engine.buildkit import buildx_command
from tests.helpers import envkit, render_refused

BASE = "name: app\ntorch: '2.5.1'\nssh: {allow_no_keys: true}\n"
FLASH = "    - {name: 'flash-attn==2.7.4.post1', no_build_isolation: true}\n"
ACME = "    - {name: 'acme-tools==1.2', index: 'https://pypi.acme.example/simple'}\n"


def _write(tmp_path: Path, entries: str, extra: str = "") -> Path:
    (tmp_path / "envkit.yaml").write_text(BASE + "packages:\n  pip:\n" + entries + extra)
    return tmp_path


def test_each_package_with_options_gets_its_layer_after_the_plain_ones(tmp_path: Path) -> None:
    project = _write(tmp_path, "    - numpy\n" + FLASH + ACME)
    assert envkit("render", cwd=project).returncode == 0
    dockerfile = (project / ".envkit" / "Dockerfile").read_text()
    runs = [block.split("\n\n", 1)[0] for block in dockerfile.split("\nRUN ")[1:]]
    plain = next(i for i, r in enumerate(runs) if "-- \\\n      numpy" in r)
    flash = next(i for i, r in enumerate(runs) if "flash-attn" in r)
    acme = next(i for i, r in enumerate(runs) if "acme-tools" in r)
    assert plain < flash < acme, "own layers come after the plain packages (torch is there)"
    assert "--no-build-isolation" in runs[flash] and "--no-build-isolation" not in runs[acme]
    assert "numpy" not in runs[flash] and "flash-attn" not in runs[plain]
    # the private index is asked for that package only, with the netrc mounted as a secret
    assert "--extra-index-url https://pypi.acme.example/simple" in runs[acme]
    assert "--mount=type=secret,id=envkit-netrc,target=/root/.netrc" in runs[acme]
    assert "type=secret" not in runs[flash] and "acme.example" not in runs[flash]
    classic = (project / ".envkit" / "Dockerfile.classic").read_text()
    assert "--no-build-isolation" in classic and "type=secret" not in classic


def test_a_package_found_on_a_page_of_links_is_installed_with_that_page(tmp_path: Path) -> None:
    """`find_links` (pip's -f: JAX's CUDA jaxlib builds, PyG's wheel pages) is asked for that
    package only, in its layer; a locked build asks it for the lock's pins."""
    page = "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"
    entry = f"    - {{name: 'jaxlib==0.4.26+cuda12.cudnn89', find_links: '{page}'}}\n"
    project = _write(tmp_path, "    - numpy\n" + entry)
    assert envkit("render", cwd=project).returncode == 0
    dockerfile = (project / ".envkit" / "Dockerfile").read_text()
    runs = [block.split("\n\n", 1)[0] for block in dockerfile.split("\nRUN ")[1:]]
    jaxlib = next(r for r in runs if "jaxlib" in r)
    assert f"--find-links {page} -- jaxlib==0.4.26+cuda12.cudnn89" in jaxlib, jaxlib
    assert sum(page in r for r in runs) == 1, "the page is that package's alone"


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            "    - {name: acme, index: 'https://bob:s3cr3t-token@pypi.acme.example/simple'}\n",
            "credentials in the index URL",
        ),
        ("    - {name: acme, index: 'http://pypi.acme.example/simple'}\n", "plain http"),
        ("    - {name: acme, find_links: 'http://wheels.example/a.html'}\n", "plain http"),
        ("    - {name: acme, find_links: 'https://x.example/$(id).html'}\n", "find_links"),
        ("    - {name: 'torch==2.4.0', no_build_isolation: true}\n", "would replace torch's layer"),
        ("    - {name: acme}\n", "no option of its own"),
        ("    - {name: acme, no_build_isolaton: true}\n", "no_build_isolaton"),
        ("    - {name: 'acme; rm -rf /', no_build_isolation: true}\n", "packages.pip[0].name"),
    ],
    ids=[
        "credentials",
        "http",
        "http-page",
        "page-injection",
        "torch",
        "no-option",
        "typo",
        "injection",
    ],
)
def test_a_package_entry_envkit_cannot_take_is_refused(
    tmp_path: Path, entry: str, said: str
) -> None:
    stderr = render_refused(_write(tmp_path, entry))
    assert said in stderr and "envkit.yaml:" in stderr and "fix:" in stderr, stderr
    assert "s3cr3t-token" not in stderr, "a password in envkit.yaml is never shown back"


def test_the_netrc_reaches_buildkit_as_a_secret_and_nothing_else(tmp_path: Path) -> None:
    options = BuildOptions(tag="t", secrets={"envkit-netrc": "/home/a/.netrc"})
    argv = buildx_command(tmp_path, "Dockerfile", options, tmp_path / "iid")
    assert argv[argv.index("--secret") + 1] == "id=envkit-netrc,src=/home/a/.netrc"
    assert not any("/home/a/.netrc" in a for a in argv if not a.startswith("id=")), argv
