"""A project's conda lock (conda-lock.yml, pixi.lock) as `conda.file`: the image's platform's
packages installed exactly, each URL through the mirror, each checked by its checksum; the
lock's PyPI packages by version and sha256; every problem refused at its line, all at once.
Real projects' locks from the corpus (tests/data/corpus: clay, yi, pixi-pytorch-gpu)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from envkit.errors import ConfigError
from envkit.plan.project.conda_locks import CondaLockPackages, git_pin
from envkit.render.files import render_files
from tests.helpers import REPO, plan_text

CORPUS = REPO / "tests" / "data" / "corpus"
CONFIG = """name: locked
base: {{flavor: cuda}}
{python}conda:
  file: {lock}
mirrors: {{preset: {preset}}}
ssh: {{allow_no_keys: true}}
"""


def _plan(tmp_path: Path, source: Path, preset: str = "tuna", python: str = "") -> object:
    shutil.copy(source, tmp_path / source.name)
    return plan_text(CONFIG.format(lock=source.name, preset=preset, python=python), tmp_path)


def test_a_conda_lock_is_installed_exactly_through_the_mirror(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CORPUS / "clay" / "conda-lock.yml")
    lock = plan.conda.lock  # type: ignore[attr-defined]
    assert lock.kind == "conda-lock" and lock.platform == "linux-64" and lock.python == "3.11.9"
    assert len(lock.conda) == 524
    files = render_files(plan)  # type: ignore[arg-type]
    explicit = files["envkit/project/conda-explicit.txt"].splitlines()
    assert explicit[1] == "@EXPLICIT" and len(explicit) == 2 + 524
    mirror = "https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/conda-forge/"
    assert all(line.startswith(mirror) for line in explicit[2:]), explicit[2]
    assert all(len(line.split("#")[1]) == 64 for line in explicit[2:])  # sha256 for rattler
    assert "anaconda.org" not in "".join(files.values())
    dockerfile = files["Dockerfile"]
    assert "envkit-conda create -p /opt/conda/envs/locked --explicit" in dockerfile
    assert "envkit-conda create -p /opt/conda/envs/locked -f" not in dockerfile


def test_a_pixi_lock_is_read_from_its_default_environment(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CORPUS / "pixi-pytorch-gpu" / "pixi.lock", python='python: "3.13"\n')
    lock = plan.conda.lock  # type: ignore[attr-defined]
    assert lock.kind == "pixi" and len(lock.conda) == 100 and lock.python == "3.13.9"
    assert all(url.startswith("https://mirrors.tuna") for url, _, _ in lock.conda)


def test_conda_environment_chooses_a_pixi_locks_environment(tmp_path: Path) -> None:
    """A pixi.lock holds an environment per feature set (glum's: default, py311, docs...);
    conda.environment installs the one the team names; one the lock lacks is refused with the
    ones it has, and on a lock with no environments the field itself is refused."""
    shutil.copy(CORPUS / "glum-pixi" / "pixi.lock", tmp_path)
    shutil.copy(CORPUS / "clay" / "conda-lock.yml", tmp_path)

    def plan(lock: str, environment: str) -> object:
        return plan_text(
            f'name: locked\nbase: {{flavor: cuda}}\npython: "3.11"\nssh: {{allow_no_keys: true}}\n'
            f"conda: {{file: {lock}, environment: {environment}}}\n",
            tmp_path,
        )

    lock = plan("pixi.lock", "py311").conda.lock  # type: ignore[attr-defined]
    assert lock.kind == "pixi" and lock.python.startswith("3.11."), lock.python
    with pytest.raises(ConfigError) as raised:
        plan("pixi.lock", "py39")
    said = str(raised.value)
    assert "pixi.lock has no 'py39' environment (it has benchmark, default, docs" in said, said
    assert "conda.environment" in said
    with pytest.raises(ConfigError) as raised:
        plan("conda-lock.yml", "py311")
    assert "conda.environment: conda-lock.yml is not a pixi.lock" in str(raised.value)
    from tests.helpers import envkit

    (tmp_path / "conda-lock.yml").unlink()
    (tmp_path / "home").mkdir()
    made = envkit("init", "--no-input", cwd=tmp_path, env={"HOME": str(tmp_path / "home")})
    assert made.returncode == 0, made.stdout + made.stderr
    assert (
        "(environment default; conda.environment: one of benchmark, docs,"
        in (tmp_path / "envkit.yaml").read_text()
    )


def test_a_locks_pypi_packages_are_installed_by_version_and_hash(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CORPUS / "yi" / "conda-lock.yml", python='python: "3.10"\n')
    files = render_files(plan)  # type: ignore[arg-type]
    pypi = files["envkit/project/conda-lock-pypi.txt"].splitlines()
    assert len(pypi) == 2 and all(" --hash=sha256:" in line and "==" in line for line in pypi)
    step = files["Dockerfile"].split("# 4. conda")[1]
    assert "--no-deps --require-hashes --index-url https://pypi.tuna" in step


def test_official_keeps_the_locks_urls_and_miniforges_conda_reads_md5(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CORPUS / "clay" / "conda-lock.yml", preset="official")
    files = render_files(plan)  # type: ignore[arg-type]
    explicit = files["envkit/project/conda-explicit.txt"].splitlines()[2:]
    assert explicit[0].startswith("https://conda.anaconda.org/conda-forge/linux-64/_libgcc_mutex")
    assert all(len(line.split("#")[1]) == 32 for line in explicit)
    assert "conda create -y -p /opt/conda/envs/locked --file" in files["Dockerfile"]


BROKEN = """version: 1
metadata:
  platforms: [linux-64]
package:
- name: python
  version: 3.11.9
  manager: conda
  platform: linux-64
  url: https://conda.anaconda.org/conda-forge/linux-64/python-3.11.9-h_0.conda
  hash: {}
- name: zlib
  version: '1.3'
  manager: conda
  platform: linux-64
  url: http://example.org/conda-forge/linux-64/zlib-1.3-h_0.conda
  hash: {sha256: 0000000000000000000000000000000000000000000000000000000000000000}
"""


def test_every_problem_of_a_lock_is_refused_at_its_line_in_one_run(tmp_path: Path) -> None:
    (tmp_path / "conda-lock.yml").write_text(BROKEN)
    with pytest.raises(ConfigError) as raised:
        plan_text(CONFIG.format(lock="conda-lock.yml", preset="tuna", python=""), tmp_path)
    text = str(raised.value)
    assert "conda-lock.yml:10: " in text and "without a sha256 or md5" in text, text
    assert "conda-lock.yml:15: " in text and "not https" in text, text


def test_a_lock_without_the_images_platform_names_the_ones_it_has(tmp_path: Path) -> None:
    (tmp_path / "conda-lock.yml").write_text(
        BROKEN.replace("[linux-64]", "[osx-arm64, win-64]").replace("linux-64", "osx-arm64")
    )
    with pytest.raises(ConfigError) as raised:
        plan_text(CONFIG.format(lock="conda-lock.yml", preset="tuna", python=""), tmp_path)
    text = str(raised.value)
    assert "conda-lock.yml:3: " in text, text
    assert "no linux-64 packages (it has osx-arm64, win-64)" in text and "relock for" in text


def test_the_configs_python_must_be_the_locks(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        _plan(tmp_path, CORPUS / "clay" / "conda-lock.yml", python='python: "3.10"\n')
    assert "locks Python 3.11.9; envkit.yaml asks for 3.10" in str(raised.value)
    assert 'set python: "3.11"' in str(raised.value)


def test_a_base_images_own_conda_does_not_take_a_whole_locked_environment(
    tmp_path: Path,
) -> None:
    shutil.copy(CORPUS / "clay" / "conda-lock.yml", tmp_path)
    config = 'name: x\nbase: {flavor: pytorch}\ntorch: "2.5.1"\ncuda: "12.4"\n'
    config += "conda: {file: conda-lock.yml}\nssh: {allow_no_keys: true}\n"
    with pytest.raises(ConfigError) as raised:
        plan_text(config, tmp_path)
    assert "use base.flavor cuda or custom" in str(raised.value)


def test_a_locks_pytorch_is_the_environments_torch_and_another_torch_is_refused(
    tmp_path: Path,
) -> None:
    lock = CORPUS / "pixi-pytorch-gpu" / "pixi.lock"
    plan = _plan(tmp_path, lock, python='python: "3.13"\n')
    torch = plan.torch  # type: ignore[attr-defined]
    assert (torch.version, torch.cuda, torch.preinstalled) == ("2.8.0", "12.9", True)
    assert any("torch 2.8.0 comes from pixi.lock" in n for n in plan.notes)  # type: ignore[attr-defined]
    step = render_files(plan)["Dockerfile"].split("# 6.")[1]  # type: ignore[arg-type]
    assert "came with the conda lock's environment" in step
    assert "uv pip install" not in step.split("ENV PIP_CONSTRAINT")[0]  # no torch over it
    with pytest.raises(ConfigError) as raised:
        _plan(tmp_path, lock, python='python: "3.13"\ntorch: "2.5.1"\n')
    assert "pixi.lock installs pytorch 2.8.0; envkit.yaml asks for torch 2.5.1" in str(raised.value)
    with pytest.raises(ConfigError) as raised:  # a CPU environment asked of a CUDA build
        _plan(tmp_path, lock, python='python: "3.13"\ncuda: "cpu"\n')
    said = str(raised.value)
    assert "pixi.lock's pytorch 2.8.0 is built for CUDA 12.9; envkit.yaml asks for cuda cpu" in said
    assert 'set cuda: "12.9"' in said


EXPLICIT = """# This file may be used to create an environment using:
# $ conda create --name <env> --file <this file>
# platform: linux-64
@EXPLICIT
https://conda.anaconda.org/conda-forge/linux-64/_libgcc_mutex-0.1-conda_forge.tar.bz2#d7c89558ba9fa0495403155b64376d81
https://conda.anaconda.org/conda-forge/linux-64/python-3.11.9-hb806964_0_cpython.conda#ac68acfa8b558ed406c75e98d3428d7b
https://conda.anaconda.org/conda-forge/noarch/pip-24.0-pyhd8ed1ab_0.conda#sha256:{sha}
"""


def test_a_conda_explicit_file_is_installed_exactly_through_the_mirror(tmp_path: Path) -> None:
    """`conda list --explicit --md5` (or sha256) output as conda.file: each URL through the
    mirror with its checksum, nothing solved; init proposes conda-lock's explicit render."""
    (tmp_path / "spec-file.txt").write_text(EXPLICIT.format(sha="ab" * 32))
    plan = plan_text(CONFIG.format(lock="spec-file.txt", preset="tuna", python=""), tmp_path)
    lock = plan.conda.lock
    assert lock is not None and lock.kind == "explicit" and lock.python == "3.11.9"
    assert [(md5 or sha)[:4] for _, sha, md5 in lock.conda] == ["d7c8", "ac68", "abab"]
    explicit = render_files(plan)["envkit/project/conda-explicit.txt"].splitlines()
    mirror = "https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/conda-forge/"
    assert len(explicit) == 2 + 3 and all(line.startswith(mirror) for line in explicit[2:])


def test_every_problem_of_an_explicit_file_is_refused_at_its_line(tmp_path: Path) -> None:
    broken = (
        EXPLICIT.format(sha="ab" * 32)
        .replace("# platform: linux-64", "# platform: osx-arm64")
        .replace("conda_forge.tar.bz2#d7c89558ba9fa0495403155b64376d81", "conda_forge.tar.bz2")
        .replace(
            "https://conda.anaconda.org/conda-forge/linux-64/python", "http://x.org/linux-64/python"
        )
        .replace("/noarch/pip", "/osx-64/pip")
    )
    (tmp_path / "spec-file.txt").write_text(broken)
    with pytest.raises(ConfigError) as raised:
        plan_text(CONFIG.format(lock="spec-file.txt", preset="tuna", python=""), tmp_path)
    text = str(raised.value)
    expected = [
        (3, "an explicit file for osx-arm64"),
        (5, "a package without an md5 or sha256"),
        (6, "a package URL that is not https"),
        (7, "a osx-64 package"),
    ]
    for line, said in expected:
        assert f"spec-file.txt:{line}: {said}" in text, (line, text)


def test_init_proposes_conda_locks_explicit_render(tmp_path: Path) -> None:
    from tests.helpers import envkit

    (tmp_path / "conda-linux-64.lock").write_text(EXPLICIT.format(sha="ab" * 32))
    (tmp_path / "environment.yml").write_text("dependencies: [python=3.11, pip]\n")
    home = tmp_path / "home"
    home.mkdir()
    made = envkit("init", "--no-input", cwd=tmp_path, env={"HOME": str(home)})
    assert "uses conda-linux-64.lock (found here" in made.stdout, made.stdout
    assert "`pip install`): environment.yml\n" in made.stdout


def test_a_locks_cuda_is_the_one_its_torch_was_built_with_not_cuda_versions_floor(
    tmp_path: Path,
) -> None:
    """Issue 47: conda-forge's cuda-version metapackage is a floor the solver may raise past
    the build; the pytorch build string (cuda126_…) names the CUDA torch was built with, and
    the build's own torch check would fail on another."""
    lock = CORPUS / "pixi-pytorch-gpu" / "pixi.lock"
    text = lock.read_text().replace("pytorch-2.8.0-cuda129_mkl", "pytorch-2.8.0-cuda126_mkl")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "pixi.lock").write_text(text)
    assert "cuda-version-12.9" in text
    plan = _plan(tmp_path, tmp_path / "src" / "pixi.lock", python='python: "3.13"\n')
    assert plan.torch.cuda == "12.6"  # type: ignore[attr-defined]


PIXI_PYPI = {
    "https://files.pythonhosted.org/packages/aa/bb/six-1.17.0-py2.py3-none-any.whl": (
        "  name: six\n  version: 1.17.0\n  sha256: " + "1" * 64 + "\n"
    ),
    "https://download.pytorch.org/whl/cu126/torchdata-0.11.0-py3-none-any.whl": (
        "  name: torchdata\n  version: 0.11.0\n  sha256: " + "2" * 64 + "\n"
    ),
    "git+https://github.com/ma-gilles/recovar?rev=main&subdirectory=pkg#c60e3c26f893": (
        "  name: recovar\n  version: 0.1.0\n"
    ),
    "./": "  name: the-project\n  version: 0.1.0\n",
    "./python/tool": "  name: tool\n  version: 0.1.0\n",
    "https://download.pytorch.org/whl/cu126/torchcodec-0.5%2Bcu126-cp313-linux_x86_64.whl": (
        "  name: torchcodec\n  version: 0.5+cu126\n"
    ),
}


def _with_pypi(tmp_path: Path, entries: dict[str, str]) -> Path:
    text = (CORPUS / "pixi-pytorch-gpu" / "pixi.lock").read_text()
    listed = "".join(f"      - pypi: {key}\n" for key in entries)
    text = text.replace(
        "    packages:\n      linux-64:\n", "    packages:\n      linux-64:\n" + listed, 1
    )
    described = "".join(f"- pypi: {key}\n{body}" for key, body in entries.items())
    text = text.replace("\npackages:\n", "\npackages:\n" + described, 1)
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "pixi.lock").write_text(text)
    return tmp_path / "src" / "pixi.lock"


def test_a_pixi_locks_pypi_wheels_by_url_and_git_packages_are_installed(tmp_path: Path) -> None:
    """Issue 47: a pixi.lock's PyPI packages as the lock has them: from PyPI by version
    through the mirror, a wheel from another index by its URL, both checked by sha256; a git
    package at the commit the lock resolved (git in the image); the project's own folders
    (`./`, `./python/tool`) installed editable from the workspace, as `-e .` is."""
    plan = _plan(tmp_path, _with_pypi(tmp_path, PIXI_PYPI), python='python: "3.13"\n')
    files = render_files(plan)  # type: ignore[arg-type]
    hashed = files["envkit/project/conda-lock-pypi.txt"].splitlines()
    assert hashed == [
        f"six==1.17.0 --hash=sha256:{'1' * 64}",
        f"torchdata @ https://download.pytorch.org/whl/cu126/torchdata-0.11.0-py3-none-any.whl"
        f" --hash=sha256:{'2' * 64}",
    ]
    assert files["envkit/project/conda-lock-unhashed.txt"] == (
        "recovar @ git+https://github.com/ma-gilles/recovar@c60e3c26f893#subdirectory=pkg\n"
        "torchcodec @ https://download.pytorch.org/whl/cu126/torchcodec-0.5%2Bcu126-cp313-"
        "linux_x86_64.whl\n"
    ), "no sha256 in the lock: installed by commit or https URL, said unchecked"
    assert "unchecked: git packages at the commit" in files["Dockerfile"]
    assert plan.editable == ("/workspace", "/workspace/python/tool")  # type: ignore[attr-defined]
    dockerfile = files["Dockerfile"]
    assert (
        "COPY envkit/project/conda-lock-unhashed.txt /opt/envkit/project/conda-lock-unhashed.txt"
        in (dockerfile)
    )
    assert "git" in plan.packages.apt_system  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("key", "body", "said"),
    [
        ("../elsewhere", "  name: elsewhere\n  version: 1.0\n", "taken from the path ../elsewhere"),
        ("git+https://github.com/a/b", "  name: b\n  version: 1.0\n", "pinned to a commit"),
        ("./wheels/x-1.0-py3-none-any.whl", "  name: x\n  version: 1.0\n", "a file by path"),
        ("ssh://git@host/x", "  name: x\n  version: 1.0\n", "not plain https"),
        (
            "http://example.org/x-1.0-py3-none-any.whl",
            "  name: x\n  version: 1.0\n  sha256: " + "3" * 64 + "\n",
            "not plain https",
        ),
    ],
    ids=["path", "git-unpinned", "wheel-by-path", "ssh", "plain-http"],
)
def test_a_pixi_pypi_entry_envkit_cannot_install_is_refused_at_its_line(
    tmp_path: Path, key: str, body: str, said: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        _plan(tmp_path, _with_pypi(tmp_path, {key: body}), python='python: "3.13"\n')
    assert said in str(raised.value), str(raised.value)
    assert "pixi.lock:" in str(raised.value)


def test_a_locks_torch_from_pypi_is_the_environments_torch_with_its_cuda_label() -> None:
    """A pixi.lock whose torch comes from the PyTorch index (a wheel by URL, +cu124): that is
    the environment's torch, its CUDA the label's."""
    url = (
        " @ https://download.pytorch.org/whl/cu124/torch-2.6.0%2Bcu124-cp311-cp311-linux_x86_64.whl"
    )
    lock = CondaLockPackages("pixi.lock", "pixi", "linux-64", (), (("torch", url, "a" * 64),), None)
    assert lock.torch == ("2.6.0", "12.4")
    pinned = (("torch", "==2.5.1+cpu", "b" * 64),)
    assert CondaLockPackages("l", "pixi", "linux-64", (), pinned, None).torch == ("2.5.1", "cpu")


def test_init_proposes_the_pixi_environment_whose_torch_is_a_cuda_build(tmp_path: Path) -> None:
    """pixi's cpu/cuda feature pattern: the default environment's torch is a CPU build and
    another environment's a CUDA one. init proposes the CUDA environment (a GPU environment is
    what envkit builds), says why, and names the others; render installs that environment."""
    from tests.helpers import envkit

    text = (CORPUS / "pixi-pytorch-gpu" / "pixi.lock").read_text()
    cuda_url = "linux-64/pytorch-2.8.0-cuda129_mkl_py313_h7947483_302.conda"
    cpu_url = "linux-64/pytorch-2.8.0-cpu_mkl_py313_h0123456_2.conda"
    head, packages = text.split("\npackages:\n", 1)
    environment = head.split("environments:\n  default:\n", 1)[1]
    entry = packages.split(f"- conda: https://conda.anaconda.org/conda-forge/{cuda_url}\n", 1)
    described = entry[1].split("\n- ", 1)[0]
    cpu_entry = f"- conda: https://conda.anaconda.org/conda-forge/{cpu_url}\n{described}\n"
    (tmp_path / "pixi.lock").write_text(
        "version: 6\nenvironments:\n  default:\n"
        + environment.replace(cuda_url, cpu_url)
        + "\n  gpu:\n"
        + environment
        + "\npackages:\n"
        + cpu_entry
        + packages
    )
    (tmp_path / "home").mkdir()
    made = envkit("init", "--no-input", cwd=tmp_path, env={"HOME": str(tmp_path / "home")})
    assert made.returncode == 0, made.stdout + made.stderr
    assert "pixi.lock, environment gpu (torch 2.8.0, CUDA 12.9" in made.stdout, made.stdout
    written = (tmp_path / "envkit.yaml").read_text()
    assert "  environment: gpu   # its torch is a CUDA build" in written, written
    assert "(environment gpu; conda.environment: one of default)" in written, written
    rendered = envkit("render", cwd=tmp_path, env={"HOME": str(tmp_path / "home")})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    explicit = (tmp_path / ".envkit" / "envkit" / "project" / "conda-explicit.txt").read_text()
    assert cuda_url in explicit and cpu_url not in explicit


def _rattler_reading(lock: Any, platform: Any) -> tuple[set[Any], dict[str, str], set[str]]:
    """One environment's platform as py-rattler (pixi's own lock library) reads it: the conda
    packages (URL, sha256, md5), the PyPI packages (name: version, or the URL of one by URL),
    and the project's own folders."""
    conda = {
        (r.url, r.sha256.hex() if r.sha256 else "", r.md5.hex() if r.md5 else "")
        for r in lock.conda_repodata_records_for_platform(platform) or ()
    }
    pypi, folders = {}, set()
    for package in lock.pypi_packages_for_platform(platform) or ():
        where = str(package.location)
        if where.startswith("."):
            folders.add(where)
        elif where.startswith("git+"):  # as pip installs it: at the commit the lock resolved
            pypi[package.name] = str(git_pin(where)).removeprefix(" @ ")
        elif urlsplit(where).hostname == "files.pythonhosted.org":  # by version, via the mirror
            pypi[package.name] = str(package.version)
        else:  # by its URL (pixi keeps an index's sha256 as the URL's #sha256=)
            pypi[package.name] = where.partition("#")[0]
    return conda, pypi, folders


CORPUS_LOCKS = sorted(
    [*CORPUS.glob("**/pixi.lock"), *CORPUS.glob("**/conda-lock.yml")], key=lambda p: str(p)
)


@pytest.mark.parametrize("path", CORPUS_LOCKS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_envkits_lock_reader_agrees_with_py_rattlers_on_every_corpus_lock(path: Path) -> None:
    """Issue 47: a pixi.lock as pixi's own library reads it. envkit's reader (which names a
    problem at its line, and keeps py-rattler's 80 MB out of the host install) must find, in
    every environment of every real lock of the corpus, exactly the packages py-rattler finds:
    the same conda URLs and checksums, the same PyPI versions and URLs, the same own folders.
    (yi's conda-lock.yml, whose pip entries list their dependencies as a mapping, is one that
    py-rattler 0.28 cannot read at all.)"""
    from rattler import LockFile

    from envkit.config.load import parse_yaml
    from envkit.plan.project.conda_locks import read_conda_lock

    try:
        theirs = LockFile.from_path(path)
    except Exception as exc:  # py-rattler's own parse error (its type is not exported)
        assert path.parent.name == "yi", f"py-rattler cannot read {path}: {exc}"
        return
    data, lines = parse_yaml(path.read_text(), path.name)
    compared = 0
    for name, environment in theirs.environments():
        platform = next((p for p in environment.platforms() if str(p) == "linux-64"), None)
        if platform is None:
            continue
        mine = read_conda_lock(path.name, data, lines, environment=name)
        conda, pypi, folders = _rattler_reading(environment, platform)
        assert set(mine.conda) == conda, (path, name)
        assert {n: pin.removeprefix("==").removeprefix(" @ ") for n, pin, _ in mine.pypi} == pypi
        assert len(mine.editable) == len(folders), (mine.editable, folders)
        compared += 1
    assert compared, f"{path}: no linux-64 environment compared"


PIXI_V5 = """version: 5
environments:
  default:
    channels:
    - url: https://conda.anaconda.org/conda-forge/
    packages:
      linux-64:
      - conda: https://conda.anaconda.org/conda-forge/linux-64/python-3.11.10-hc5c86c4_3_cpython.conda
      - pypi: .
      - pypi: direct+https://example.org/wheels/tool-1.0-py3-none-any.whl
packages:
- kind: conda
  name: python
  version: 3.11.10
  build: hc5c86c4_3_cpython
  subdir: linux-64
  url: https://conda.anaconda.org/conda-forge/linux-64/python-3.11.10-hc5c86c4_3_cpython.conda
  sha256: {sha}
- kind: pypi
  name: demo
  version: 0.1.0
  path: .
  editable: true
- kind: pypi
  name: tool
  version: '1.0'
  url: direct+https://example.org/wheels/tool-1.0-py3-none-any.whl
  sha256: {tool}
"""


def test_a_pixi_v5_locks_own_folder_and_a_direct_url_wheel_are_read(tmp_path: Path) -> None:
    """pixi's format 5 names a record by its url: (path: for the project's own folder), and
    marks a wheel by URL `direct+https://`: the folder is installed editable from the
    workspace, the wheel by its URL and sha256, the rest of the lock kept."""
    lock = tmp_path / "src" / "pixi.lock"
    lock.parent.mkdir()
    lock.write_text(PIXI_V5.format(sha="1" * 64, tool="2" * 64))
    plan = _plan(tmp_path, lock, python='python: "3.11"\n')
    read = plan.conda.lock  # type: ignore[attr-defined]
    assert read.editable == (".",) and len(read.conda) == 1, read
    url = "https://example.org/wheels/tool-1.0-py3-none-any.whl"
    assert read.pypi == (("tool", f" @ {url}", "2" * 64),), read.pypi
