"""A project's files as its team has them (issue 34): a torch line the resolved torch satisfies is
envkit's torch (dropped from the project's layer, installed by envkit's torch layer with the
companions the project names, from the same index), a line it cannot satisfy is refused with
both values; everything PEP 508 and pip's file format allow is read with `packaging`; every
problem of every file is reported in one run, each at its own line. Through `envkit render`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.helpers import envkit, render_refused

CONFIG = (
    'name: proj\nbase:\n  flavor: cuda\ntorch: "2.4.1"\ncuda: "12.4"\n'
    "ssh:\n  allow_no_keys: true\n  uid: 1000\n  gid: 1000\n"
)


def _project(tmp_path: Path, files: dict[str, str], extra: str) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "envkit.yaml").write_text(CONFIG + extra)
    return tmp_path


def _rendered(project: Path) -> tuple[str, str]:
    done = envkit("render", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    context = project / ".envkit"
    return (context / "Dockerfile").read_text(), done.stdout + done.stderr


REQUIREMENTS = "packages:\n  requirements: [requirements.txt]\n"


def test_a_torch_line_envkits_torch_satisfies_is_envkits_and_companions_join_its_layer(
    tmp_path: Path,
) -> None:
    text = (
        "--extra-index-url https://download.pytorch.org/whl/cu124\n"
        "torch==2.4.1+cu124 ; sys_platform != 'win32' and sys_platform != 'darwin'\n"
        "torchvision>=0.18\n"
        "numpy>=1.26; python_version >= '3.10'\n"
        "transformers[torch]==4.44.2 \\\n"
        "    --hash=sha256:" + "ab" * 32 + "\n"
        "git+https://github.com/openai/CLIP.git\n"
        "-e git+https://github.com/CompVis/taming-transformers.git@master#egg=taming-transformers\n"
        "-e .\n"
        "torch>=3 ; sys_platform == 'darwin'\n"
    )
    project = _project(tmp_path, {"requirements.txt": text}, REQUIREMENTS)
    dockerfile, _ = _rendered(project)
    built = (project / ".envkit" / "envkit" / "project" / "requirements.txt").read_text()
    lines = built.splitlines()
    # the PyTorch index line is torch's: envkit's torch layer has its own (the mirror's)
    assert lines[0].startswith("# envkit: --extra-index-url https://download.pytorch.org")
    assert "torch's index; envkit's torch layer installs torch 2.4.1 (CUDA 12.4)" in lines[0]
    assert (
        lines[1].startswith("# envkit: torch==2.4.1+cu124")
        and "torch 2.4.1 (CUDA 12.4)" in lines[1]
    )
    assert lines[2].startswith("# envkit: torchvision>=0.18: installed beside torch")
    assert lines[3] == "numpy>=1.26; python_version >= '3.10'", "single quotes as written"
    assert lines[4].startswith("transformers[torch]==4.44.2") and lines[5].strip().startswith(
        "--hash"
    )
    assert lines[6] == "git+https://github.com/openai/CLIP.git"
    assert lines[7].startswith(
        "taming-transformers @ git+https://github.com/CompVis/taming-transformers.git@master"
    )
    assert lines[8].startswith("# envkit: -e . is installed from the workspace at first start")
    assert lines[9] == "torch>=3 ; sys_platform == 'darwin'", "a line for another OS is pip's"
    torch_layer = next(line for line in dockerfile.splitlines() if "torch==2.4.1 " in line)
    assert "download.pytorch.org/whl/cu124 torch==2.4.1 torchvision==0.19.1" in torch_layer
    assert "      git \\" in dockerfile or "      git\n" in dockerfile, "git for the git+ lines"
    assert "torch==2.4.1 torchvision==0.19.1 > /etc/envkit/pip-constraints.txt" in dockerfile


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("torch==2.3.0", "torch==2.3.0 does not admit torch 2.4.1; envkit installs torch 2.4.1 (CUDA 12.4)"),
        ("torch==2.4.1+cu118", "asks for the cu118 build; envkit installs torch 2.4.1 (CUDA 12.4)"),
        ("torchvision==0.17.0", "does not admit torchvision 0.19.1, the release built for torch 2.4.1"),
        ("torch @ https://download.pytorch.org/whl/cu118/torch-2.4.1.whl", "from a URL"),
    ],
)  # fmt: skip
def test_a_torch_line_envkits_torch_cannot_satisfy_is_refused_with_both_values(
    tmp_path: Path, line: str, said: str
) -> None:
    project = _project(tmp_path, {"requirements.txt": f"numpy\n{line}\n"}, REQUIREMENTS)
    stderr = render_refused(project)
    assert "requirements.txt:2:" in stderr and said in stderr, stderr
    assert "fix:" in stderr


def test_every_problem_of_every_file_is_reported_in_one_run_at_its_own_line(
    tmp_path: Path,
) -> None:
    files = {
        "requirements.txt": "-r more.txt\nnumpy\n--trusted-host pypi.internal\nrequests>=\n",
        "more.txt": "torch==2.0.1\n--extra-index-url http://plain.example/simple\n",
        "environment.yml": "dependencies:\n  - pytorch-cuda=11.8\n  - pip:\n    - -e ../elsewhere\n",
    }
    extra = REQUIREMENTS + "conda:\n  file: environment.yml\n"
    stderr = render_refused(_project(tmp_path, files, extra))
    for where in ("requirements.txt:3:", "requirements.txt:4:", "more.txt:1:", "more.txt:2:",
                  "environment.yml:2:", "environment.yml:4:"):  # fmt: skip
        assert where in stderr, (where, stderr)
    assert "6 problems" in stderr, stderr
    assert "mirrors.trusted_hosts: [pypi.internal]" in stderr


def test_a_conda_files_torch_is_envkits_and_its_channel_order_is_kept(tmp_path: Path) -> None:
    text = (
        "channels:\n  - pytorch\n  - nvidia\n  - conda-forge\n"
        "dependencies:\n  - python=3.11\n  - pytorch::pytorch=2.4\n  - pytorch-cuda=12.4\n"
        "  - torchaudio\n  - numpy=1.26\n  - pip\n  - pip:\n    - einops==0.8.0\n"
    )
    project = _project(tmp_path, {"environment.yml": text}, "conda:\n  file: environment.yml\n")
    dockerfile, _ = _rendered(project)
    environment = (project / ".envkit" / "environment.yml").read_text()
    channels = environment.split("channels:")[1].split("dependencies:")[0]
    assert channels.index("pytorch") < channels.index("nvidia") < channels.index("conda-forge")
    body = environment.split("dependencies:")[1]
    assert (
        "pytorch::pytorch" not in body and "pytorch-cuda" not in body and "torchaudio" not in body
    )
    assert "numpy=1.26" in body
    assert "torch==2.4.1 torchaudio==2.4.1" in dockerfile
    after_torch = (project / ".envkit" / "envkit" / "conda-pip.txt").read_text()
    assert after_torch == "einops==0.8.0\n"  # the pip section, after envkit's torch


def test_a_conda_python_other_than_the_images_is_refused(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {"environment.yml": "dependencies:\n  - python=3.9\n  - numpy\n"},
        "conda:\n  file: environment.yml\n",
    )
    stderr = render_refused(project)
    assert "environment.yml:2:" in stderr and "Python 3.9; the image's is 3.11" in stderr, stderr
    assert 'python: "3.9"' in stderr


@pytest.mark.parametrize(
    "spec",
    ["python<3.13", "python>=3.9,<3.13", "python=3.11", "python 3.11.*", "python=3.11.5=h955ad1f_0",
     "python", "python>=3.11.4", "python >= 3.8", "python >=3.9, <3.13"],
)  # fmt: skip
def test_a_conda_python_range_the_images_python_meets_renders(tmp_path: Path, spec: str) -> None:
    """Any spec that admits a release of the image's Python 3.11 is met (TorchTools' own
    requirements-dev.conda.yaml says python<3.13)."""
    project = _project(
        tmp_path,
        {"environment.yml": f"dependencies:\n  - {spec}\n  - numpy\n"},
        "conda:\n  file: environment.yml\n",
    )
    _rendered(project)


@pytest.mark.parametrize(
    ("spec", "shown", "fix"),
    [("python>=3.12", ">=3.12", 'python: "3.12"'), ("python<3.10", "<3.10", 'python: "3.8"'),
     ("python==3.10.4", "==3.10.4", 'python: "3.10"')],
)  # fmt: skip
def test_a_conda_python_range_the_images_python_misses_is_refused_with_one_that_fits(
    tmp_path: Path, spec: str, shown: str, fix: str
) -> None:
    project = _project(
        tmp_path,
        {"environment.yml": f"dependencies:\n  - {spec}\n"},
        "conda:\n  file: environment.yml\n",
    )
    stderr = render_refused(project)
    assert f"Python {shown}; the image's is 3.11" in stderr and fix in stderr, stderr


def test_pyproject_with_single_quoted_markers_and_its_torch_line(tmp_path: Path) -> None:
    pyproject = (
        '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        "dependencies = [\n"
        '  "torch>=2.4,<2.6",\n'
        "  \"bitsandbytes>=0.43; sys_platform == 'linux' and platform_machine != 'aarch64'\",\n"
        '  "torchvision",\n'
        "]\n"
    )
    project = _project(tmp_path, {"pyproject.toml": pyproject}, "python:\n  project: .\n")
    dockerfile, _ = _rendered(project)
    assert 'bitsandbytes>=0.43; sys_platform == "linux"' in dockerfile, "quoted for the shell"
    assert "torch==2.4.1 torchvision==0.19.1" in dockerfile
    assert "torch>=2.4" not in dockerfile.split("# 6.")[1]


def test_a_uv_lock_of_a_large_project_is_read(tmp_path: Path) -> None:
    """1.5 MB: lerobot's own is 1.16 MB, and large projects' run to 5 MB."""
    pyproject = '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["six"]\n'
    padding = "".join(f"# {'x' * 96}\n" for _ in range(16_000))
    lock = (
        'version = 1\nrequires-python = ">=3.10"\n' + padding + "\n"
        '[[package]]\nname = "demo"\nversion = "0.1.0"\nsource = { editable = "." }\n'
        'dependencies = [{ name = "six" }]\n\n[package.metadata]\n'
        'requires-dist = [{ name = "six" }]\n\n'
        '[[package]]\nname = "six"\nversion = "1.16.0"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
        'wheels = [{ url = "https://files.pythonhosted.org/six-1.16.0-py2.py3-none-any.whl", '
        'hash = "sha256:' + "8a" * 32 + '" }]\n'
    )
    assert len(lock) > 1_500_000
    project = _project(
        tmp_path, {"pyproject.toml": pyproject, "uv.lock": lock}, "python:\n  project: .\n"
    )
    dockerfile, _ = _rendered(project)
    assert "uv.lock" in dockerfile


def test_a_pytorch_images_conda_update_keeps_its_torch_through_the_pip_section(
    tmp_path: Path,
) -> None:
    """On a pytorch image the environment file updates the conda env that holds torch: conda is
    pinned to torch, and the pip section conda runs gets the constraints of what torch was built
    against (PIP_CONSTRAINT), written before conda runs."""
    project = _project(
        tmp_path,
        {"environment.yml": "dependencies:\n  - scipy\n  - pip\n  - pip:\n    - einops\n"},
        "conda:\n  file: environment.yml\n",
    )
    config = project / "envkit.yaml"
    config.write_text(config.read_text().replace("flavor: cuda", "flavor: pytorch"))
    dockerfile, _ = _rendered(project)
    conda_run = next(
        block for block in dockerfile.split("\n\n") if "conda env update" in block
    ).replace("\\\n", " ")
    assert "conda-meta/pinned" in conda_run
    written = conda_run.index("> /etc/envkit/pip-constraints.txt")
    assert "python /opt/envkit/programs/torch_needs.py" in conda_run[:written], conda_run
    copied = conda_run.index("COPY envkit/programs/torch_needs.py /opt/envkit/programs/")
    assert copied < conda_run.index("conda env update"), "the program is there before it runs"
    assert "PIP_CONSTRAINT=/etc/envkit/pip-constraints.txt" in conda_run[written:], conda_run


def test_a_new_conda_environments_pip_section_installs_after_envkits_torch(
    tmp_path: Path,
) -> None:
    """On a CUDA image envkit makes the conda environment, then pip installs torch into it: the
    file's pip section waits for that torch and installs under its constraints, in a layer of
    its own, instead of running inside the solve, where a package of it that needs torch would
    bring PyPI's latest first. environment.yml says so and keeps the rest of the file."""
    project = _project(
        tmp_path,
        {"environment.yml": "dependencies:\n  - scipy\n  - pip\n  - pip:\n    - einops\n"
         "    - --extra-index-url https://example.org/simple\n    - accelerate>=0.30\n"},
        "conda:\n  file: environment.yml\n",
    )  # fmt: skip
    dockerfile, _ = _rendered(project)
    solve = dockerfile.index("-f /opt/envkit/environment.yml")
    torch = dockerfile.index("torch==2.4.1")
    pinned = dockerfile.index("ENV PIP_CONSTRAINT=/etc/envkit/pip-constraints.txt")
    section = dockerfile.index("-r /opt/envkit/conda-pip.txt")
    assert solve < torch < pinned < section, dockerfile
    assert "COPY envkit/conda-pip.txt /opt/envkit/conda-pip.txt" in dockerfile
    context = project / ".envkit"
    assert (context / "envkit" / "conda-pip.txt").read_text().splitlines() == [
        "einops",
        "--extra-index-url https://example.org/simple",
        "accelerate>=0.30",
    ]
    environment = (context / "environment.yml").read_text()
    assert "scipy" in environment and "einops" not in yaml.safe_load(environment)["dependencies"]
    assert "Then its pip section, under torch's constraints" in environment, environment
    # On a pytorch image the section stays in the solve, kept by the constraints there.
    config = project / "envkit.yaml"
    config.write_text(config.read_text().replace("flavor: cuda", "flavor: pytorch"))
    shutil.rmtree(context)
    dockerfile, _ = _rendered(project)
    assert "conda-pip.txt" not in dockerfile
    assert {
        "pip": ["einops", "--extra-index-url https://example.org/simple", "accelerate>=0.30"]
    } in yaml.safe_load((context / "environment.yml").read_text())["dependencies"]


def test_torchvision_in_envkit_yamls_own_pip_list_goes_with_torch(tmp_path: Path) -> None:
    """packages.pip's torchvision is torch's companion as a file's line is: installed in the
    torch layer from torch's index at the release built for it, not from PyPI in the pip
    layer (another CUDA build); a pin built for another torch is refused at its line, the fix
    naming the torch it was built for."""
    project = _project(tmp_path, {}, "packages:\n  pip: [torch, torchvision, einops]\n")
    dockerfile, _ = _rendered(project)
    assert "whl/cu124 torch==2.4.1 torchvision==0.19.1" in dockerfile
    pip_layer = dockerfile.split("# 9. Your pip packages", 1)[1].split("\n\n", 1)[0]
    assert "einops" in pip_layer and "torch" not in pip_layer, pip_layer  # a README's pip line
    (project / "envkit.yaml").write_text(
        CONFIG + "packages:\n  pip: [einops, torchvision==0.15.1, 'torchaudio>=9']\n"
    )
    shutil.rmtree(project / ".envkit")
    stderr = render_refused(project)
    assert "envkit.yaml:11: packages.pip[1]: torchvision==0.15.1 does not admit" in stderr, stderr
    assert '(e.g. torch: "2.0.1")' in stderr, "the torch torchvision 0.15 was built for"
    assert "packages.pip[2]: torchaudio>=9" in stderr, "every line in one run"


def test_lines_are_read_as_pip_joins_them_and_torchs_own_pins_are_left_to_its_layer(
    tmp_path: Path,
) -> None:
    """pip's own reading: a comment line never continues (`# c \\` does not swallow the next
    line), a continuation at the end of the file still counts, `--hash sha256:…` with a space is
    a hash, a byte order mark is not part of the first line. A pip-compile lock's pins of
    torch's CUDA libraries and triton are torch's layer's (its own, for its build)."""
    digest = "ab" * 32
    text = (
        "\ufeffnumpy==1.26.4 --hash sha256:" + digest + "\n"
        "# pinned for torch \\\n"
        "torch==2.4.1\n"
        "nvidia-cublas-cu12==12.1.3.1 \\\n    --hash=sha256:" + digest + "\n"
        "einops\n"
        "--extra-index-url https://pypi.example.org/simple\n"
        "triton==3.0.0 \\"
    )
    project = _project(tmp_path, {"requirements.txt": text}, REQUIREMENTS)
    _rendered(project)
    built = (project / ".envkit" / "envkit" / "project" / "requirements.txt").read_text()
    lines = built.splitlines()
    assert lines[0].endswith("numpy==1.26.4 --hash sha256:" + digest), "kept as written"
    assert lines[2].startswith("# envkit: torch==2.4.1"), "the line after the comment is judged"
    assert lines[3].startswith("# envkit: nvidia-cublas-cu12==12.1.3.1: torch's own")
    assert lines[5] == "einops"
    assert lines[6] == "--extra-index-url https://pypi.example.org/simple", "another index kept"
    assert lines[7].startswith("# envkit: triton==3.0.0: torch's own"), "the last line too"


def test_every_problem_of_a_requirements_file_and_its_includes_at_its_own_line(
    tmp_path: Path,
) -> None:
    wheel = (
        "https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp311-cp311-linux_x86_64.whl"
    )
    text = (
        "# c \\\n"
        "torch==2.1.0\n"
        "-r missing.txt\n"
        "foo @ file:///srv/foo\n"
        f"{wheel}\n"
        "--extra-index-url https://${TOKEN}@pypi.example.org/simple\n"
        "-r\n"
    )
    project = _project(tmp_path, {"requirements.txt": text}, REQUIREMENTS)
    stderr = render_refused(project)
    for line, said in [
        (2, "torch==2.1.0 does not admit torch 2.4.1"),
        (3, "cannot read requirements file"),
        (4, "a local path"),
        (5, "torch @ https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118"),
        (6, "pip fills ${NAME} from the environment"),
        (7, "-r names no file"),
    ]:
        assert f"requirements.txt:{line}: {said}" in stderr, (line, stderr)
    assert "64 MiB" not in stderr, "the size bound only where the size is the problem"


def test_what_a_dropped_line_leaves_out_is_said(tmp_path: Path) -> None:
    """torch's extras and an editable project's extras are not installed (envkit's torch layer,
    the first start's --no-deps): render says so, each at its line; `-e` naming nothing, and a
    conda pip section's include of a file that is not there, are refused at their own lines."""
    text = "torch[opt-einsum]==2.4.1\n-e .[dev]\n"
    files = {"requirements.txt": text, "pyproject.toml": '[project]\nname = "d"\n'}
    project = _project(tmp_path / "a", files, REQUIREMENTS)
    _, said = _rendered(project)
    assert "requirements.txt:1: torch[opt-einsum]==2.4.1: envkit's torch layer installs" in said
    assert "requirements.txt:2: -e .[dev]: the project installs from the workspace" in said
    conda = "dependencies:\n  - numpy\n  - pip:\n    - six\n    - -r other.txt\n"
    broken = _project(
        tmp_path / "b",
        {"requirements.txt": "six\n-e\n", "environment.yml": conda},
        REQUIREMENTS + "conda:\n  file: environment.yml\n",
    )
    stderr = render_refused(broken)
    assert "requirements.txt:2: -e names nothing" in stderr, stderr
    assert "environment.yml:5: cannot read requirements file" in stderr, stderr


def test_a_conda_pip_sections_include_and_project_folders_keep_the_file(tmp_path: Path) -> None:
    """Issue 47: conda hands its pip section to pip from the file's folder, so `-r
    requirements.txt` there is that file (its lines taken in), and a folder of the project
    (`submodules/ext`, `./localpkg`: a submodule's CUDA extension) is installed from the
    workspace at first start, said at its line; neither loses the rest of the file."""
    conda = (
        "dependencies:\n  - numpy\n  - pip:\n    - -r reqs/base.txt\n    - submodules/ext\n"
        "    - ./localpkg\n    - tqdm\n"
    )
    files = {
        "environment.yml": conda,
        "reqs/base.txt": "einops==0.8.0\n-r extra.txt\n",
        "reqs/extra.txt": "six\n",
        "submodules/ext/setup.py": "",
        "localpkg/setup.py": "",
    }
    project = _project(tmp_path, files, "conda:\n  file: environment.yml\n")
    _, said = _rendered(project)
    pip = (project / ".envkit" / "envkit" / "conda-pip.txt").read_text().splitlines()
    assert pip == ["tqdm", "einops==0.8.0", "six"], pip  # installed after envkit's torch
    assert "environment.yml:5: submodules/ext: a folder of the project, installed editable" in said
    assert "environment.yml:6: ./localpkg: a folder of the project" in said
    entrypoint = (project / ".envkit" / "envkit" / "runtime" / "entrypoint.sh").read_text()
    assert "/workspace/submodules/ext /workspace/localpkg" in entrypoint


def test_only_what_a_cuda_torch_needs_is_left_to_its_layer_and_its_index_where_nothing_else_needs_it(
    tmp_path: Path,
) -> None:
    """torch's own CUDA libraries and triton are left to a CUDA torch's layer; nvidia packages
    torch does not require (npp) are the project's, and on a CPU torch none is torch's. A
    PyTorch index line stays where another line needs that index (a +cu121 xformers)."""
    text = (
        "--extra-index-url https://download.pytorch.org/whl/cu121\n"
        "nvidia-cudnn-cu12==9.1.0.70\n"
        "nvidia-npp-cu12==12.2.5.30\n"
        "xformers==0.0.27+cu121\n"
        "numpy==1.26.4  # pinned \\\n"
        "scipy\n"
    )
    project = _project(tmp_path / "cuda", {"requirements.txt": text}, REQUIREMENTS)
    _rendered(project)
    lines = (project / ".envkit/envkit/project/requirements.txt").read_text().splitlines()
    assert lines[0].startswith("--extra-index-url https://download.pytorch.org"), "xformers'"
    assert lines[1].startswith("# envkit: nvidia-cudnn-cu12==9.1.0.70: torch's own")
    assert lines[2] == "nvidia-npp-cu12==12.2.5.30", "not torch's"
    cpu = _project(tmp_path / "cpu", {"requirements.txt": "triton==3.0.0\n"}, REQUIREMENTS)
    config = cpu / "envkit.yaml"
    config.write_text(config.read_text().replace('cuda: "12.4"', 'cuda: "cpu"'))
    _rendered(cpu)
    kept = (cpu / ".envkit/envkit/project/requirements.txt").read_text().splitlines()
    assert kept == ["triton==3.0.0"], "a CPU torch has no triton of its own"


def test_a_comment_that_ends_in_a_backslash_takes_the_next_line_as_pip_does() -> None:
    from envkit.plan.project.requirement_lines import logical_lines

    assert logical_lines("numpy==1.26.4  # pinned \\\nscipy\nsix\n") == [
        (1, 2, "numpy==1.26.4"),
        (3, 3, "six"),
    ]
    assert logical_lines("# c \\\ntorch\n") == [(2, 2, "torch")], "a comment line never continues"


def test_a_pin_older_than_any_release_is_said_and_the_file_kept(tmp_path: Path) -> None:
    """Issue 47: a torch no `torch:` setting could give (older than the table) does not lose
    the file: the line is said, with the nearest release and what is installed instead, and
    the file's other packages stay. A pin newer than the table is refused (refresh it)."""
    files = {"requirements.txt": "numpy\ntorch==1.4.0\ntorchvision==0.5.0\neinops\n"}
    dockerfile, said = _rendered(_project(tmp_path, files, REQUIREMENTS))
    assert (
        "requirements.txt:2: torch==1.4.0: no release envkit can build admits it (the "
        "nearest is torch 1.11.0); installed instead: torch 2.4.1" in said
    ), said
    assert "requirements.txt:3: torchvision==0.5.0: no release" in said
    assert "torch==2.4.1 torchvision==0.19.1" in dockerfile, "the companion built for it"
    layer = dockerfile.split("requirements.txt", 1)[1]
    assert "numpy" in (tmp_path / ".envkit" / "envkit" / "project" / "requirements.txt").read_text()
    assert layer
    newer = _project(tmp_path / "newer", {"requirements.txt": "torch>=99\n"}, REQUIREMENTS)
    assert "torch>=99 does not admit torch 2.4.1" in render_refused(newer)


def test_packages_pip_companions_on_a_pytorch_image_are_said_not_dropped_silently(
    tmp_path: Path,
) -> None:
    """A pytorch image carries torchvision and torchaudio built for its torch: packages.pip's
    are not installed over them, and render says so (before, they vanished without a word)."""
    config = CONFIG.replace("flavor: cuda", "flavor: pytorch")
    (tmp_path / "envkit.yaml").write_text(config + "packages:\n  pip: [einops, torchvision]\n")
    dockerfile, said = _rendered(tmp_path)
    assert "packages.pip: torchvision==0.19.1: the pytorch image carries its own" in said, said
    pip_layer = dockerfile.split("# 9. Your pip packages", 1)[1].split("\n\n", 1)[0]
    assert "einops" in pip_layer and "torchvision" not in pip_layer, pip_layer


def test_envkit_yamls_own_pip_torch_older_than_the_table_is_said_too(tmp_path: Path) -> None:
    """One rule everywhere: packages.pip's torch==1.4 is said as a file's line is."""
    _, said = _rendered(_project(tmp_path, {}, "packages:\n  pip: [numpy, 'torch==1.4.0']\n"))
    assert "envkit.yaml: packages.pip[1]: torch==1.4.0: no release envkit can build admits" in said


def test_a_spaced_conda_bound_keeps_its_upper_bound(tmp_path: Path) -> None:
    """`pytorch >= 2.0 , < 2.3` as conda reads it: the upper bound is judged too."""
    files = {"environment.yml": "dependencies:\n  - pytorch >= 2.0 , < 2.3\n  - numpy\n"}
    stderr = render_refused(_project(tmp_path, files, "conda:\n  file: environment.yml\n"))
    assert "environment.yml:2:" in stderr and "does not admit torch 2.4.1" in stderr, stderr


def test_a_cuda_build_no_setting_could_give_is_said_and_the_file_kept(tmp_path: Path) -> None:
    """Issue 47: a +cuXYZ label or a conda CUDA pin for which envkit can build no image of the
    configured torch (no `cuda:` would meet it) is said at its line and the file kept; one a
    `cuda:` setting would meet stays refused (above); a CUDA range is met by any CUDA in it."""
    files = {"requirements.txt": "numpy\ntorch==2.4.1+cu101\n"}
    _, said = _rendered(_project(tmp_path, files, REQUIREMENTS))
    assert (
        "requirements.txt:2: torch==2.4.1+cu101: torch 2.4.1 has no cu101 build envkit can "
        "build; installed instead: torch 2.4.1 (CUDA 12.4)" in said
    ), said
    conda = "conda:\n  file: environment.yml\n"
    files = {
        "environment.yml": "dependencies:\n  - cudatoolkit=10.2\n  - pytorch=2.4.1\n  - numpy\n"
    }
    _, said = _rendered(_project(tmp_path / "old", files, conda))
    assert (
        "environment.yml:2: cudatoolkit=10.2: envkit cannot build torch 2.4.1 with the CUDA" in said
    )
    assert "numpy" in (tmp_path / "old" / ".envkit" / "environment.yml").read_text()
    files = {"environment.yml": "dependencies:\n  - pytorch>=2.3\n  - pytorch-cuda>=11.6\n"}
    _, said = _rendered(_project(tmp_path / "range", files, conda))
    assert "pytorch-cuda>=11.6: CUDA 12.4 comes with envkit's torch build" in said, said
    files = {"environment.yml": "dependencies:\n  - pytorch=2.4.1\n  - pytorch-cuda=11.8\n"}
    stderr = render_refused(_project(tmp_path / "other", files, conda))
    assert "pytorch-cuda=11.8 asks for CUDA 11.8" in stderr and 'set `cuda: "11.8"`' in stderr


def test_a_pyg_wheel_page_for_another_torch_is_read_for_envkits(tmp_path: Path) -> None:
    """PyG's find-links pages hold wheels built for one torch minor and CUDA (torch-scatter
    2.1.2+pt21cu118): for torch 2.4.1 (CUDA 12.4) the page for 2.4 and cu124 is read instead,
    said at its line, the file kept; init proposes the page's torch and CUDA where the file
    pins no torch."""
    text = "-f https://data.pyg.org/whl/torch-2.1.0+cu118.html\ntorch-scatter\n"
    project = _project(tmp_path / "a", {"requirements.txt": text}, REQUIREMENTS)
    _, said = _rendered(project)
    assert (
        "requirements.txt:1: PyG's wheels there are built for torch 2.1 (cu118); envkit installs "
        "torch 2.4.1 (CUDA 12.4), which would not load them: taken from "
        "https://data.pyg.org/whl/torch-2.4.0+cu124.html" in said
    ), said
    copied = (project / ".envkit" / "envkit" / "project" / "requirements.txt").read_text()
    assert copied.startswith("-f https://data.pyg.org/whl/torch-2.4.0+cu124.html\n"), copied
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "requirements.txt").write_text(text)
    made = envkit("init", "--no-input", cwd=folder, env={"HOME": str(tmp_path)})
    config = (folder / "envkit.yaml").read_text()
    assert 'torch: "2.1.2"' in config and 'cuda: "11.8"' in config, made.stdout + config
