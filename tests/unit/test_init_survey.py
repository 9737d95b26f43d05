"""init never skips a file silently (issue 34): every environment file it finds is used, or
said not used with why: a second conda file or requirements file (alternatives, by
precedence), a requirements file under its own name, a setup.py, a pyproject.toml or uv.lock it
cannot read (with the setting that moves the size bound). Through `envkit init --no-input`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import REPO, envkit


def _init(folder: Path, **env: str) -> str:
    home = folder.parent / "home"
    home.mkdir(exist_ok=True)
    made = envkit("init", "--no-input", cwd=folder, env={"HOME": str(home), **env})
    assert made.returncode == 0, made.stdout + made.stderr
    rendered = envkit("render", cwd=folder, env={"HOME": str(home)})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    return made.stdout


def _made(tmp_path: Path, files: dict[str, str]) -> tuple[str, str]:
    """init's output and the envkit.yaml it wrote, in a project holding FILES."""
    folder = tmp_path / "project"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    said = _init(folder)
    return said, (folder / "envkit.yaml").read_text()


def _pyproject(name: str, dependency: str, **extras: list[str]) -> str:
    """A PEP 621 pyproject.toml: NAME, one DEPENDENCY, and each extra's packages."""
    text = f'[project]\nname = "{name}"\nversion = "1"\ndependencies = ["{dependency}"]\n'
    listed = (f"{extra} = {json.dumps(packages)}\n" for extra, packages in extras.items())
    return text + "[project.optional-dependencies]\n" + "".join(listed)


def test_every_file_found_is_used_or_said_not_used_with_why(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    (folder / "binder").mkdir(parents=True)
    files = {
        "pyproject.toml": "[project\nname = 'x'\n",
        "environment.yml": "dependencies: [numpy]\n",
        "environment.yaml": "dependencies: [scipy]\n",
        "requirements.txt": "six\n",
        "binder/requirements.txt": "tqdm\n",
        "requirements-dev.txt": "pytest\n",
        "setup.py": "from setuptools import setup\nsetup(install_requires=['six'])\n",
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    said = _init(folder)
    assert "uses environment.yml (found here" in said
    alternatives = ("environment.yaml", "requirements.txt", "binder/requirements.txt", "setup.py")
    listed = next(line for line in said.splitlines() if line.startswith("also here, not used ("))
    assert listed.endswith("): " + ", ".join(alternatives)), listed
    assert "# " + listed in (folder / "envkit.yaml").read_text()
    assert "not used: pyproject.toml: not valid TOML (" in said, said
    assert "not used: requirements-dev.txt: a requirements file under its own name" in said


def test_a_lock_over_the_bound_is_said_with_the_setting_that_moves_it(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0.1"\ndependencies = ["six"]\n'
    )
    (folder / "uv.lock").write_text("version = 1\n" + "# padding\n" * 120_000)  # 1.2 MB
    said = _init(folder, ENVKIT_PROJECT_FILE_LIMIT="1")
    # the lock beside pyproject.toml is read by its build too: both said, with the setting
    assert "not used: uv.lock: uv.lock" in said, said
    left = next(line for line in said.splitlines() if line.startswith("left out pyproject.toml"))
    assert "ENVKIT_PROJECT_FILE_LIMIT=MIB moves it" in left, left
    assert "envkit.yaml:" not in left, "no place in a config that was never written"


def test_a_setup_py_is_read_without_running_it(tmp_path: Path) -> None:
    """A literal install_requires is the project's pip list (torch is envkit's, its torch line
    proposes the release, torchvision goes with torch), CUDA extensions ask for the devel
    image; a list computed when setup.py runs is said, not guessed."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "setup.py").write_text(
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        'setup(name="x", install_requires=["torch>=2.0,<2.5", "torchvision", '
        "\"einops; python_version>='3.8'\"],\n"
        '      ext_modules=[CUDAExtension("x_ext", ["x.cu"])])\n'
        "open('/tmp/never-run-by-envkit', 'w')\n"
    )
    said = _init(folder)
    config = (folder / "envkit.yaml").read_text()
    assert "uses setup.py (found here" in said and "torch from setup.py: torch" in said, said
    assert 'pip: ["torchvision", "einops; python_version>=\'3.8\'"]' in config, config
    assert "variant: devel" in config and 'torch: "2.4.1"' in config, config
    assert not Path("/tmp/never-run-by-envkit").exists(), "setup.py is read, never run"

    (folder / "setup.py").write_text(
        "from setuptools import setup\nsetup(install_requires=open('reqs.txt').read().split())\n"
    )
    (folder / "envkit.yaml").unlink()
    said = _init(folder)
    assert "not used: setup.py: its install_requires is decided when it runs" in said, said

    # a list bound once to a module-level name is read (SAM 2's REQUIRED_PACKAGES); one
    # changed later (appended to, or bound again in a branch) is decided when it runs
    bound = 'from setuptools import setup\nREQUIRED = ["numpy>=1.24", "tqdm"]\n'
    for later, read in (
        ("", True),
        ("REQUIRED.append('x')\n", False),
        ("if 1: REQUIRED = []\n", False),
    ):
        (folder / "setup.py").write_text(bound + later + "setup(install_requires=REQUIRED)\n")
        (folder / "envkit.yaml").unlink()
        said = _init(folder)
        assert ("uses setup.py" in said) is read, (later, said)
        assert ('pip: ["numpy>=1.24", "tqdm"]' in (folder / "envkit.yaml").read_text()) is read


def test_a_setup_py_whose_requirements_live_elsewhere_is_said_not_read_as_empty(
    tmp_path: Path,
) -> None:
    """setup(**cfg), or a file not Python 3: not a setup.py without dependencies. A bare
    setup() takes setup.cfg's install_requires, as setuptools does (and says the file no
    more); a setup.cfg of tools' settings only is not an environment file."""
    for name, files in {
        "kwargs": {"setup.py": "from setuptools import setup\ncfg = {}\nsetup(**cfg)\n"},
        "py2": {"setup.py": "print 'hello'\n"},
    }.items():
        folder = tmp_path / name
        folder.mkdir()
        for file, text in files.items():
            (folder / file).write_text(text)
        said = _init(folder)
        assert "uses setup.py" not in said and "not used: setup.py: " in said, (name, said)
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    (folder / "setup.cfg").write_text("[options]\ninstall_requires =\n    six  # why\n    tqdm\n")
    said = _init(folder)
    assert "uses setup.py" in said and "setup.cfg" not in said, said
    assert 'pip: ["six", "tqdm"]' in (folder / "envkit.yaml").read_text()
    (folder / "setup.cfg").write_text("[isort]\nprofile = black\n")
    (folder / "envkit.yaml").unlink()
    assert "setup.cfg" not in _init(folder)


def test_a_project_without_an_environment_file_is_told_so(tmp_path: Path) -> None:
    folder = tmp_path / "nanogpt"
    folder.mkdir()
    (folder / "train.py").write_text("import torch\n")
    assert "found no environment file to use" in _init(folder)


def test_a_project_with_only_misspelled_or_foldered_files_has_each_named(tmp_path: Path) -> None:
    """Issue 47: files under other names are never invisible. Each is named with how to use
    it, on init's output and in envkit.yaml's comments; files that only look alike are not."""
    folder = tmp_path / "project"
    (folder / "requirements").mkdir(parents=True)
    (folder / "deploy").mkdir()
    (folder / "bindings" / "torch").mkdir(parents=True)
    files = {
        "requirments_base.txt": "numpy\n",
        "requirments_dev.txt": "-r requirments_base.txt\npytest\n",
        "requirements/mminstall.txt": "mmcv>=2.0\n",
        "requirements/prod.in": "six\n",
        "requirements/prod.txt": "six==1.16.0\n",
        "environment-dev.yml": "name: dev\ndependencies:\n  - python=3.11\n",
        "poetry.lock": "",
        "pdm.lock": "",
        "Pipfile.lock": "{}",
        "deploy/pyproject.toml": "[project]\nname = 'deploy'\nversion = '1'\n",
        "bindings/torch/setup.py": "from setuptools import setup\nsetup(name='tcnn')\n",
        # alike, not environment files: a compose file, a CI file, a licence
        "docker-compose.yml": "services: {}\n",
        "environment-ci.yml": "jobs: {}\n",
        "LICENSE.txt": "MIT\n",
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    said = _init(folder)
    config = (folder / "envkit.yaml").read_text()
    # with no file under a usual name, one under its own is taken (a conda file before
    # requirements); every other one is named with how to use it
    assert "uses environment-dev.yml (found here; no usable file under a usual name)" in said, said
    assert "file: environment-dev.yml" in config
    for name in [n for n in list(files)[:11] if n != "environment-dev.yml"]:
        assert f"not used: {name}: " in said, (name, said)
        assert f"# not used: {name}: " in config, name
    assert "requirments_dev.txt: a requirements file under its own name" in said
    assert "deploy/pyproject.toml: a package of its own in deploy/" in said
    assert "setup.py: a package of its own in bindings/torch/, built by its setup.py: `-e " in said
    assert "mminstall.txt: OpenMMLab's packages that mim installs" in said, said
    for alike in ("docker-compose.yml", "environment-ci.yml", "LICENSE.txt"):
        assert alike not in said, alike


def test_the_file_the_projects_own_recipe_installs_is_the_one_used(tmp_path: Path) -> None:
    """Issue 47: an install line in the project's .devcontainer decides between alternatives
    (here over pyproject.toml, which precedence alone would take)."""
    folder = tmp_path / "project"
    (folder / ".devcontainer").mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0.1"\ndependencies = ["six"]\n'
    )
    (folder / "requirements-gpu.txt").write_text("tqdm\n")
    (folder / ".devcontainer" / "Dockerfile").write_text(
        "FROM python:3.11\nCOPY . /src\nRUN pip install --no-cache-dir -r ../requirements-gpu.txt\n"
    )
    said = _init(folder)
    assert (
        "uses requirements-gpu.txt (found here; the project installs it: "
        ".devcontainer/Dockerfile:3)" in said
    ), said
    assert "not used (" in said and said.split("not used (")[1].split("\n")[0].endswith(
        "): pyproject.toml"
    ), said
    assert "requirements: [requirements-gpu.txt]" in (folder / "envkit.yaml").read_text()


@pytest.mark.parametrize(
    ("files", "said"),
    [
        # an image recipe COPYs the file elsewhere, under its own name (MONAI's Dockerfile)
        ({"requirements-gpu.txt": "tqdm\n", "Dockerfile": "FROM python:3.11\nCOPY "
          "requirements-gpu.txt /tmp/\nRUN pip install -r /tmp/requirements-gpu.txt\n"},
         "uses requirements-gpu.txt (found here; the project installs it: Dockerfile:3)"),
        # a recipe named with a dash (yolov5's Dockerfile-cpu, Dockerfile-arm64) is one too
        ({"requirements-gpu.txt": "tqdm\n", "utils/docker/Dockerfile-gpu": "FROM python:3.11\n"
          "COPY requirements-gpu.txt /tmp/\nRUN pip install -r /tmp/requirements-gpu.txt\n"},
         "the project installs it: utils/docker/Dockerfile-gpu:3"),
        # a Makefile runs in its own folder
        ({"env/requirements-gpu.txt": "tqdm\n", "env/Makefile": "all:\n\tpip install -r "
          "requirements-gpu.txt\n"}, "the project installs it: env/Makefile:2"),
        # any shell script runs in its own folder too (alphageometry's run.sh)
        ({"requirements-gpu.txt": "tqdm\n", "run.sh": "#!/bin/sh\npip install -r "
          "requirements-gpu.txt\n"}, "the project installs it: run.sh:2"),
        # a commented-out install is not one the project runs (ColossalAI's test_ci.sh in a
        # side folder): the main file is chosen by its name, not by that comment
        ({"legacy/demo/requirements.txt": "tqdm\n", "legacy/demo/test_ci.sh":
          "# pip install -r requirements.txt\npython test.py\n"},
         "uses requirements.txt (found here; precedence"),
        # a docs Makefile installs the docs' environment, not the project's
        ({"docs/requirements.txt": "sphinx\n", "docs/Makefile": "html:\n\tpip install -r "
          "requirements.txt\n"}, "uses requirements.txt (found here; precedence"),
        ({"Pipfile": '[dev-packages]\nnumpy = "*"\n'},
         "not used: Pipfile: it names no package but 1 dev ones (`pipenv install -d`)"),
        # a Makefile's dev target first: the main file it installs is the environment (TTS's)
        ({"requirements.dev.txt": "black\n", "requirements.txt": "tqdm\n", "Makefile":
          "docs:\n\tpip install -r docs/requirements.txt\ndev-deps:\n\tpip install -r "
          "requirements.dev.txt\ndeps:\n\tpip install -r requirements.txt\n",
          "docs/requirements.txt": "sphinx\n"}, "uses requirements.txt (found here; the project "
          "installs it: Makefile:6)"),
        # a bundled tool's recipe is not the project's (OLMo's dependencies/<tool>/Dockerfile)
        ({"pyproject.toml": '[project]\nname = "x"\nversion = "1"\ndependencies = ["six"]\n',
          "tools/dependencies/bench/requirements.txt": "gpustat\n",
          "tools/dependencies/bench/Dockerfile": "FROM nvidia/cuda:11.5.1-cudnn8-devel-ubuntu20.04"
          "\nRUN pip install -r requirements.txt\n"}, "uses pyproject.toml (found here; prec"),
        # a file that names no torch is said so, with the CUDA of the image the project builds on
        ({"requirements.txt": "numpy\n", "Dockerfile": "FROM nvidia/cuda:11.8.0-runtime-ubuntu22"
          ".04\nRUN pip install -r requirements.txt\n"}, "\nrequirements.txt names no torch; "
          "Dockerfile:1 builds on nvidia/cuda:11.8.0-runtime-ubuntu22.04\n"),
    ],
)  # fmt: skip
def test_a_recipes_install_line_is_read_where_it_runs(
    tmp_path: Path, files: dict[str, str], said: str
) -> None:
    folder = tmp_path / "project"
    for name, text in {"requirements.txt": "six\n", **files}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    shown = _init(folder)
    assert said in shown, shown


def test_a_pyproject_declaring_no_dependencies_yields_to_the_projects_requirements(
    tmp_path: Path,
) -> None:
    """Issue 47: a [project] table without dependencies is the package's metadata (Stability's
    generative-models keeps its environment in requirements/pt2.txt): the file is used, the
    pyproject said with how to install the package too; alone, it is still used."""
    bare = '[project]\nname = "sgm"\ndynamic = ["version"]\nrequires-python = ">=3.8"\n'
    said, config = _made(tmp_path, {"pyproject.toml": bare, "requirements/pt2.txt": "einops\n"})
    assert "uses requirements/pt2.txt (found here" in said, said
    assert "not used: pyproject.toml: its [project] declares no dependencies" in said
    assert "requirements: [requirements/pt2.txt]" in config and "python:\n" not in config
    said, config = _made(tmp_path / "alone", {"pyproject.toml": bare})
    assert "uses pyproject.toml" in said and "project: ." in config


def test_with_no_environment_file_the_packages_a_recipe_installs_by_name_are_proposed(
    tmp_path: Path,
) -> None:
    """Issue 47: a project whose only environment is its Dockerfile's `pip install` line (a
    continued line, options with values, pip's own upgrade, a local path) gets those packages,
    torch and its CUDA from the line's own pin and index."""
    recipe = (
        "FROM python:3.11\n# RUN pip install old-package\nRUN pip install -U pip setuptools && \\\n"
        "    # a comment inside the RUN, dropped by Docker: pip install commented-out \\\n"
        "    pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cu121"
        ' torch==2.3.1 "transformers>=4.40" -c /app/constraints.txt einops -e . \\\n'
        "    && python -m pip install tqdm==4.66.4 --target /opt/extra ./vendored\n"
    )
    said, config = _made(tmp_path, {"docker/Dockerfile": recipe, "train.py": "print(1)\n"})
    assert "uses docker/Dockerfile (found here; the packages that docker/Dockerfile:3's" in said
    assert "torch from docker/Dockerfile:3: torch==2.3.1" in said
    assert "old-package" not in config and "commented-out" not in config
    assert 'torch: "2.3.1"' in config and 'cuda: "12.1"' in config
    assert 'pip: ["transformers>=4.40", "einops", "tqdm==4.66.4"]   # found here' in config
    # a recipe that installs a file: the file, and what the same recipe installs by name
    said, config = _made(tmp_path / "a", {"requirements.txt": "six\n", "docker/Dockerfile": (
        "FROM python:3.11\nCOPY requirements.txt .\nRUN pip install -r requirements.txt -I\n"
        "RUN pip install jupyterlab\n")})  # fmt: skip
    assert (
        "uses requirements.txt (found here; the project installs it: docker/Dockerfile:3)" in said
    )
    assert "packages.pip: jupyterlab (the packages that docker/Dockerfile:4's" in said
    assert "requirements: [requirements.txt]" in config and 'pip: ["jupyterlab"]' in config
    assert "not used: docker/Dockerfile" not in said, "it was read: not 'unused'"
    # beside a requirements file, the file is taken and the recipe said not used
    said, config = _made(tmp_path / "b", {"Dockerfile": recipe, "requirements.txt": "six\n"})
    assert "uses requirements.txt" in said and "not used: Dockerfile: the project's own" in said
    assert "requirements: [requirements.txt]" in config


def test_every_pip_line_of_a_recipe_is_read_and_its_mim_and_find_links_are_said(
    tmp_path: Path,
) -> None:
    """Issue 47: a Dockerfile that installs its packages one RUN at a time (mmpose's) gives
    them all, not its first line's; `mim install` (OpenMMLab's wheels for the torch and CUDA)
    is said, never dropped in silence, and an https -f page stays with its package."""
    recipe = (
        "FROM python:3.11\nRUN pip install cython\nRUN pip install xtcocotools\n"
        "RUN pip install openmim && mim install mmengine 'mmcv>=2.0.0'\n"
        "RUN pip3 install jaxlib==0.4.26 -f https://storage.googleapis.com/jax-releases/x.html\n"
    )
    said, config = _made(tmp_path, {"Dockerfile": recipe})
    assert "the packages that Dockerfile:2,3,4,5's pip install names" in said, said
    page = (
        '{name: "jaxlib==0.4.26", find_links: "https://storage.googleapis.com/jax-releases/x.html"}'
    )
    assert f'pip: ["cython", "xtcocotools", "openmim", {page}]' in config, config
    assert "not used: Dockerfile:4: `mim install mmengine 'mmcv>=2.0.0'`: not carried" in said


def test_a_recipes_extra_index_stays_with_the_packages_of_its_install(tmp_path: Path) -> None:
    """text-generation-webui's TensorRT-LLM recipe: `pip install tensorrt_llm==1.1.0
    --extra-index-url https://pypi.nvidia.com`: the package is only there, so the index stays
    with it (its `index`); PyTorch's index is envkit's torch layer's, not carried."""
    recipe = (
        "FROM python:3.11\nRUN pip install tensorrt_llm==1.1.0 --extra-index-url "
        "https://pypi.nvidia.com\nRUN pip install torchvision einops --index-url "
        "https://download.pytorch.org/whl/cu121\n"
    )
    _, config = _made(tmp_path, {"Dockerfile": recipe})
    nvidia = '{name: "tensorrt_llm==1.1.0", index: "https://pypi.nvidia.com"}'
    assert f"pip: [{nvidia}, " in config and '"einops"' in config, config
    assert "download.pytorch.org" not in config.split("pip:")[1].split("\n")[0], config
    rendered = (tmp_path / "project" / ".envkit" / "Dockerfile").read_text()
    assert "https://pypi.nvidia.com" in rendered, rendered


@pytest.mark.parametrize(
    ("recipe", "where"),
    [
        ('FROM python:3.11\nCOPY . /src\nRUN pip3 install -e ".[webui,model_worker]"\n', ":3"),
        ("FROM python:3.11\nRUN pip3 install fs_chat[model-worker,webui]\n", ":2"),
    ],
)
def test_the_extras_the_projects_recipe_installs_it_with_are_proposed(
    tmp_path: Path, recipe: str, where: str
) -> None:
    """The project's own recipe installs it with extras (FastChat's `pip3 install
    fschat[model_worker,webui]`, `-e ".[train]"`): those extras are python.extras, so the
    image holds what they name (their torch too), not the package's core alone."""
    pyproject = _pyproject(
        "fs-chat", "requests", model_worker=["torch", "transformers"], webui=["gradio"]
    )
    said, config = _made(tmp_path, {"pyproject.toml": pyproject, "docker/Dockerfile": recipe})
    assert f"uses pyproject.toml (found here; docker/Dockerfile{where} installs it with [" in said
    assert (
        'extras: ["model_worker", "webui"]' in config
        or 'extras: ["model-worker", "webui"]' in config
    )
    assert "not used: docker/Dockerfile" not in said, "it was read: not 'unused'"
    rendered = (tmp_path / "project" / ".envkit" / "Dockerfile").read_text()
    assert "transformers" in rendered and "gradio" in rendered, rendered


def test_the_install_docs_editable_install_of_the_checkout_is_proposed(tmp_path: Path) -> None:
    """With no recipe of its own, the README's `pip install -e ".[train]"` (llm-foundry's,
    speechbrain's `--editable .`) installs the checkout: python.install editable, with its
    extras. Its `pip install fs-chat[webui]` for users installs PyPI's release: not counted."""
    pyproject = _pyproject("fs-chat", "requests", train=["einops"], webui=["gradio"])
    readme = (
        "# fs-chat\n\nFrom PyPI:\n\n```bash\npip install fs-chat[webui]\n```\n\n"
        'From a checkout:\n\n```bash\ngit clone x\npip install -e ".[train]"\n```\n'
    )
    said, config = _made(tmp_path, {"pyproject.toml": pyproject, "README.md": readme})
    assert "uses pyproject.toml (found here; README.md:13 installs it with [train] editable" in (
        said
    ), said
    assert 'extras: ["train"]' in config and "install: editable" in config, config
    assert "own package is not installed" not in said, said
    rendered = (tmp_path / "project" / ".envkit" / "Dockerfile").read_text()
    assert "einops" in rendered and "gradio" not in rendered, rendered


def test_a_projects_own_package_left_uninstalled_is_said_with_the_setting(tmp_path: Path) -> None:
    """A pyproject whose recipes and docs never install the checkout: its dependencies are
    the image's, the package itself is not, and init says so with the setting that does."""
    pyproject = '[project]\nname = "coordfill"\nversion = "1"\ndependencies = ["six"]\n'
    said, config = _made(tmp_path, {"pyproject.toml": pyproject})
    assert (
        "the project's own package is not installed, only what it needs: python.install: "
        "editable installs the checkout at first start"
    ) in said, said
    assert "  install: dependencies   # what it needs, not the package itself" in config, config


def test_a_recipes_apt_lines_are_said_and_a_recipe_without_pip_hides_no_later_one(
    tmp_path: Path,
) -> None:
    """The system packages a recipe installs (TTS's espeak-ng) are said at their line with
    where they go; a first recipe that installs only those does not hide the pip line of the
    project's next recipe."""
    said, config = _made(tmp_path, {
        "Dockerfile": "FROM python:3.11\nRUN apt-get update && apt-get -y install espeak-ng "
                      "libsndfile1-dev && rm -rf /var/lib/apt/lists/*\n",
        "docker/Dockerfile.dev": "FROM python:3.11\nRUN pip install einops\n",
    })  # fmt: skip
    apt = "not used: Dockerfile:2: `apt-get install espeak-ng libsndfile1-dev`: not carried"
    assert apt in said, said
    assert 'pip: ["einops"]' in config and "# not used: Dockerfile:2: `apt-get" in config


def test_a_recipes_pip_line_is_split_as_the_shell_splits_it(tmp_path: Path) -> None:
    """A `;` inside a quoted marker is the marker's, not the end of the command: the line's
    packages after it are kept; a `;`, `&&` or `|` outside quotes ends the install, and a pip
    or mim named by its path is still the tool."""
    recipe = (
        "FROM python:3.11\n"
        'RUN pip install "transformers>=4.30" "numpy<2; python_version<\\"3.12\\"" accelerate'
        " && /opt/conda/bin/mim install 'mmcv>=2.0'; /usr/bin/pip3 install einops | tee pip.log\n"
    )
    said, config = _made(tmp_path, {"Dockerfile": recipe})
    wanted = '"transformers>=4.30", "numpy<2; python_version < \\"3.12\\"", "accelerate", "einops"'
    assert f"pip: [{wanted}]" in config, config
    assert "not used: Dockerfile:2: `mim install 'mmcv>=2.0'`: not carried" in said, said


def test_a_file_pinning_a_torch_older_than_the_table_is_kept_with_the_nearest(
    tmp_path: Path,
) -> None:
    """Issue 47: one pin envkit cannot meet does not lose the file. init keeps the conda file
    (its other packages, its CUDA where torch has that build) and proposes the nearest release
    it can build; render says at each line that no release meets it and what is installed
    instead, and installs every other package of the file."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "environment.yml").write_text(
        "channels: [pytorch, conda-forge]\ndependencies:\n  - python=3.10\n  - pytorch=1.10.1\n"
        "  - cudatoolkit=11.3.1\n  - torchvision=0.11.2\n  - numpy\n  - pip:\n    - einops\n"
    )
    said = _init(folder)
    assert "uses environment.yml" in said, said
    config = (folder / "envkit.yaml").read_text()
    assert 'torch: "1.11.0"' in config and 'cuda: "11.3"' in config, config
    assert "the nearest release envkit can build" in config
    rendered = envkit("render", cwd=folder, env={"HOME": str(tmp_path / "home")})
    for line in ("environment.yml:4: pytorch=1.10.1", "environment.yml:6: torchvision=0.11.2"):
        assert (
            f"note: {line}: no release envkit can build admits it (the nearest is torch "
            "1.11.0); installed instead: torch 1.11.0 (CUDA 11.3)"
            in rendered.stdout
            + rendered.stderr
        ), rendered
    environment = (folder / ".envkit" / "environment.yml").read_text()
    assert "numpy" in environment and "einops" in environment, "the file's other packages stay"


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("environment.yaml", "dependencies:\n  - cudatoolkit=10.2\n  - pytorch=1.7.0\n  - pip:\n"
         "    - omegaconf==2.0.0\n", "environment.yaml:2: cudatoolkit=10.2: envkit cannot build"),
        ("requirements.txt", "-f https://download.pytorch.org/whl/torch_stable.html\n"
         "torch==1.7.1+cu101\ntimm==0.4.12\n", "requirements.txt:2: torch==1.7.1+cu101: no"),
    ],
)  # fmt: skip
def test_a_cuda_pin_no_image_can_carry_keeps_the_file_with_one_that_can(
    tmp_path: Path, name: str, text: str, line: str
) -> None:
    """Issue 47, as taming-transformers has it: a CUDA envkit can build no image of (10.2, 10.1)
    is not proposed (the nearest release's default is), and the file is kept, said at its line."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / name).write_text(text)
    said = _init(folder)
    assert f"uses {name}" in said, said
    config = (folder / "envkit.yaml").read_text()
    assert 'torch: "1.11.0"' in config and 'cuda: "10.' not in config, config
    rendered = envkit("render", cwd=folder, env={"HOME": str(tmp_path / "home")})
    assert rendered.returncode == 0 and line in rendered.stdout + rendered.stderr, rendered


def test_an_old_torch_gets_its_python_and_cuda_sources_get_nvcc(tmp_path: Path) -> None:
    """Issue 47, as StyleGAN3 has it: with --flavor cuda (envkit installs Python), a conda file
    whose torch predates envkit's default Python 3.11 (pytorch=1.9.1 under `python >= 3.8`)
    is kept with the newest Python the proposed torch has wheels for, not left out over it;
    CUDA sources that torch.utils.cpp_extension compiles at run time (no setup.py) propose the
    devel variant, whose nvcc compiles them, and init says why."""
    folder, home = tmp_path / "project", tmp_path / "home"
    (folder / "ops").mkdir(parents=True)
    home.mkdir()
    (folder / "ops" / "bias_act.cu").write_text("__global__ void k() {}\n")
    (folder / "environment.yml").write_text(
        "channels: [pytorch, nvidia]\ndependencies:\n  - python >= 3.8\n  - pip\n"
        "  - pytorch=1.9.1\n  - cudatoolkit=11.1\n  - scipy=1.7.1\n"
    )
    made = envkit("init", "--no-input", "--flavor", "cuda", cwd=folder, env={"HOME": str(home)})
    assert made.returncode == 0 and "uses environment.yml" in made.stdout, made
    config = (folder / "envkit.yaml").read_text()
    assert 'python: "3.10"' in config and "file: environment.yml" in config, config
    assert "variant: devel          # found here: ops/bias_act.cu" in config, config
    assert "base variant devel, with nvcc: ops/bias_act.cu" in made.stdout, made.stdout
    rendered = envkit("render", cwd=folder, env={"HOME": str(home)})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr


@pytest.mark.parametrize(
    ("requires", "python"),
    [(">=3.8,<3.10", "3.9"), ("^3.10,<3.11", "3.10"), (">=3.9", None), (">=3.12.4,<3.13", "3.12")],
)
def test_requires_python_without_envkits_default_gets_one_it_admits(
    tmp_path: Path, requires: str, python: str | None
) -> None:
    """cleanrl's `requires-python = ">=3.8,<3.11"` (or Poetry's `python`): the image's Python
    is one the project admits (the cuda flavor, where envkit installs Python), not 3.11."""
    pyproject = (
        f'[project]\nname = "x"\nversion = "0.1"\nrequires-python = "{requires}"\n'
        'dependencies = ["torch==2.4.1", "six"]\n'
    )
    _, config = _made(tmp_path, {"pyproject.toml": pyproject})
    if python is None:  # envkit's default admitted: the pytorch image, its own Python
        assert "flavor: pytorch" in config and "version:" not in config, config
    else:
        assert "flavor: cuda" in config and f'version: "{python}"' in config, config


def test_a_cpu_torch_asks_no_gpu_of_the_engine_or_of_verify(tmp_path: Path) -> None:
    """keras's requirements.txt takes torch from the CPU index: the config then asks no GPU
    (`gpus: all` would fail `up` on a machine without one, `require_gpu` every verify)."""
    cpu = "--extra-index-url https://download.pytorch.org/whl/cpu\ntorch==2.5.1\nnumpy\n"
    _, config = _made(tmp_path, {"requirements.txt": cpu})
    assert 'cuda: "cpu"' in config and "gpus: none" in config, config
    assert "require_gpu: false" in config


def test_a_jax_without_a_cuda_extra_is_said_to_run_on_the_cpu(tmp_path: Path) -> None:
    """big_vision's requirements name jax and flax, no jax[cuda12]: a CPU jaxlib on a GPU box."""
    for name, text, said in (
        ("cpu", "jax\nflax\n", True),
        ("gpu", "jax[cuda12]>=0.4\nflax\n", False),
    ):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "requirements.txt").write_text(text)
        shown = _init(folder)
        assert ("a CPU jaxlib; jax[cuda12] runs on the GPU" in shown) is said, shown
        assert 'torch: "none"' in (folder / "envkit.yaml").read_text()


def test_torch_only_in_an_extra_proposes_that_extra(tmp_path: Path) -> None:
    """`pip install .[cu121]` (hatch's features): torch only in optional-dependencies. init
    proposes the extra with the newest CUDA build as python.extras, and its torch."""
    pyproject = (
        '[project]\nname = "x"\nversion = "0.1"\ndependencies = ["numpy"]\n'
        '[project.optional-dependencies]\ncpu = ["torch==2.4.1"]\n'
        'cu121 = ["torch==2.4.1+cu121", "einops"]\ncu118 = ["torch==2.4.1+cu118"]\n'
    )
    said, config = _made(tmp_path, {"pyproject.toml": pyproject})
    assert "torch from pyproject.toml [cu121]: torch==2.4.1+cu121" in said, said
    assert 'torch: "2.4.1"' in config and 'cuda: "12.1"' in config, config
    assert 'extras: ["cu121"]' in config


def test_an_unpinned_torch_takes_the_release_the_projects_own_image_builds_on(
    tmp_path: Path,
) -> None:
    """yolov5: requirements.txt asks torch>=1.8.0 and its Dockerfile builds on
    pytorch/pytorch:2.8.0-cuda12.8: the release its team runs, not envkit's default; a file
    whose range excludes that image's torch keeps its own release, on the image's CUDA."""
    for name, pin, proposed in (("runs", "torch>=1.8.0", "2.4.1"), ("excludes", "torch<2.4", "")):
        folder = tmp_path / name
        (folder / "docker").mkdir(parents=True)
        (folder / "requirements.txt").write_text(f"{pin}\nnumpy\n")
        (folder / "docker" / "Dockerfile").write_text(
            "FROM pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime\n"
            "COPY requirements.txt .\nRUN pip install -r requirements.txt\n"
        )
        said = _init(folder)
        config = (folder / "envkit.yaml").read_text()
        assert "docker/Dockerfile:1 builds on pytorch/pytorch:2.4.1" in said, said
        assert 'cuda: "12.1"' in config and "variant: devel" not in config, config
        assert ('torch: "2.4.1"' in config) == bool(proposed), config


@pytest.mark.parametrize(
    ("recipe", "torch", "cuda"),
    [
        (  # mmpose: the image named through the ARG defaults it is written with, devel
            'ARG PYTORCH="2.1.2"\nARG CUDA="12.1"\nARG CUDNN="8"\n'
            "FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel\n",
            "2.1.2",
            "12.1",
        ),
        (  # alphafold: nvidia/cuda's CUDA, its build stage devel, its runtime stage not
            "ARG CUDA=11.8.0\nFROM nvidia/cuda:${CUDA}-cudnn8-devel-ubuntu22.04 AS build\n"
            "FROM nvidia/cuda:${CUDA:-12.1.1}-cudnn8-runtime-ubuntu22.04\n",
            None,
            "11.8",
        ),
        (  # stylegan3: an NGC release, its torch and CUDA from compat.yaml's ngc_pytorch
            "FROM nvcr.io/nvidia/pytorch:23.10-py3\n",
            "2.1.0",
            "12.2",
        ),
    ],
)
def test_the_projects_own_base_image_proposes_its_torch_cuda_and_the_devel_variant(
    tmp_path: Path, recipe: str, torch: str | None, cuda: str
) -> None:
    """Issue 47: a Dockerfile's base image (its ARGs substituted) says the CUDA the team runs,
    and a devel base that the project compiles with nvcc; a requirements file that leaves torch
    open takes them. The CUDA proposed is the nearest envkit can build where it has no build of
    the image's own (12.2 -> 12.1)."""
    said, config = _made(
        tmp_path,
        {"requirements.txt": "torch>=2.0\neinops\n", "Dockerfile": recipe + "RUN echo\n"},
    )
    assert "Dockerfile:" in said and "builds on" in said, said
    assert "variant: devel" in config, config
    if torch:
        assert f'torch: "{torch}"' in config, config
    proposed = config.split('cuda: "')[1].split('"')[0]
    assert proposed.split(".")[0] == cuda.split(".")[0], config
    assert "einops" in (tmp_path / "project" / "requirements.txt").read_text()


@pytest.mark.parametrize(
    ("files", "said", "torch", "cuda"),
    [
        (  # sd-scripts: the README's install line is where its torch and CUDA are written
            {"README-ja.md": "pip install torch==2.4.0\n",
             "README.md": "# x\n\n```bash\npip install torch==2.6.0 torchvision==0.21.0 "
             "--index-url https://download.pytorch.org/whl/cu124\npip install -r "
             "requirements.txt\n```\n"},
            "requirements.txt names no torch; README.md:4: torch==2.6.0", "2.6.0", "12.4",
        ),
        (  # OLMo: a pytorch:X-cudaY tag on another registry is read as pytorch/pytorch's
            {"docker/Dockerfile": "FROM ghcr.io/allenai/pytorch:2.2.2-cuda11.8-python3.11\n"},
            "builds on ghcr.io/allenai/pytorch:2.2.2-cuda11.8-python3.11", "2.2.2", "11.8",
        ),
    ],
)  # fmt: skip
def test_where_no_file_pins_torch_the_readme_or_a_base_on_any_registry_does(
    tmp_path: Path, files: dict[str, str], said: str, torch: str, cuda: str
) -> None:
    shown, config = _made(tmp_path, {"requirements.txt": "einops\n", **files})
    assert said in shown, shown
    assert f'torch: "{torch}"' in config and f'cuda: "{cuda}"' in config, config


def test_the_package_a_requirements_file_installs_with_e_dot_is_not_said_unused(
    tmp_path: Path,
) -> None:
    """sd-scripts' requirements.txt ends in `-e .`: its setup.py is installed with it (at first
    start), not an alternative precedence set aside."""
    said, _ = _made(
        tmp_path,
        {"requirements.txt": "six\n-e .\n", "setup.py": "from setuptools import setup\nsetup()\n"},
    )
    assert "uses requirements.txt" in said and "not used" not in said, said


def test_a_file_a_requirements_file_includes_is_used_with_it_not_said_unused(
    tmp_path: Path,
) -> None:
    """OpenMMLab's requirements.txt is `-r requirements/runtime.txt` and `-r optional.txt`:
    those are installed with it (render copies them), not "not used"; mminstall.txt is."""
    folder = tmp_path / "project"
    (folder / "requirements").mkdir(parents=True)
    (folder / "requirements.txt").write_text("-r requirements/runtime.txt\n")
    (folder / "requirements" / "runtime.txt").write_text("einops\n")
    (folder / "requirements" / "mminstall.txt").write_text("mmengine\n")
    said = _init(folder)
    assert "uses requirements.txt" in said and "requirements/runtime.txt" not in said, said
    assert "not used: requirements/mminstall.txt" in said


def test_a_tensorflow_project_gets_the_cuda_its_tensorflow_was_built_for(tmp_path: Path) -> None:
    """spleeter's TensorFlow is torch: none; its CUDA is the one TensorFlow's tested build
    configurations name (11.8 for 2.12), not the default torch's newest (TF 2.12 cannot load
    CUDA 12's libraries); a CPU TensorFlow asks for none."""
    for name, text, cuda in (
        ("tf212", "tensorflow==2.12.0\nnumpy\n", 'cuda: "11.8"'),
        ("tfcpu", "tensorflow-cpu==2.15.0\n", None),
    ):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "requirements.txt").write_text(text)
        shown = _init(folder)
        config = (folder / "envkit.yaml").read_text()
        assert 'torch: "none"' in config, config
        if cuda is None:
            assert "\ncuda:" not in config, config
        else:
            assert cuda in config and "TensorFlow 2.12 was built for CUDA 11.8" in shown, shown


def test_a_tensorflow_pin_maps_to_the_nearest_cuda_with_an_image_of_its_major() -> None:
    """Read in process, through the table: 2.5's CUDA 11.2 has no nvidia/cuda image here, 11.3
    of the same major carries its libraries; 1.15's CUDA 10.0 none; a range takes its newest
    release; a release past the table is said; a uv.lock's locked release is read as a pin."""
    from packaging.requirements import Requirement

    from envkit.commands.init.torch_wish import from_lines, from_uv_lock, tensorflow_cuda

    assert tensorflow_cuda(Requirement("tensorflow>=2.5,<2.6")) == ("2.5", "11.3")
    assert tensorflow_cuda(Requirement("tensorflow-gpu==1.15.5")) == ("1.15", None)
    assert tensorflow_cuda(Requirement("tensorflow>=2.12,<2.16")) == ("2.15", "12.4")
    newer = from_lines([], "requirements.txt", ["tensorflow==2.99.0"])
    assert "tensorflow==2.99.0 is not in envkit's table, the nearest release is" in newer.said
    lock = {"package": [{"name": "tensorflow", "version": "2.16.1"}, {"name": "numpy"}]}
    wish = from_uv_lock(lock, "uv.lock")
    assert (wish.none, wish.cuda) == (True, "12.4"), wish
    said = "TensorFlow 2.16 was built for CUDA 12.3 (12.4 is the nearest with an image)"
    assert said in wish.said, wish


def test_a_requirement_lines_options_and_a_jax_without_cuda_are_read_as_pip_reads_them() -> None:
    """grok-1's `jax[cuda12_pip]==0.4.25 -f URL` is a jax line (its option was read as part
    of the requirement, so init proposed torch); flax alone brings a CPU jax, said as jax
    alone is; alphafold's jaxlib==0.4.26+cuda12.cudnn89 is a GPU jaxlib, not said."""
    from envkit.commands.init.torch_wish import from_lines

    find = "jax[cuda12_pip]==0.4.25 -f https://storage.googleapis.com/jax-releases/j.html"
    assert from_lines([], "requirements.txt", [find, "numpy"]).none
    cpu = "(its jax has no CUDA extra: a CPU jaxlib"
    assert cpu in from_lines([], "requirements.txt", ["flax", "optax"]).said
    gpu = from_lines([], "r.txt", ["jax==0.4.26", "jaxlib==0.4.26+cuda12.cudnn89"])
    assert gpu.none and cpu not in gpu.said, gpu


def test_a_locks_torch_in_an_extra_proposes_that_extra() -> None:
    """cosmos-curate's poetry.lock holds torch only under the extra `local`: without
    python.extras, `poetry export` leaves torch and its fifty companions out. uv.lock says the
    same in its project's entry."""
    from envkit.commands.init.torch_wish import from_uv_lock

    torch = {"name": "torch", "version": "2.7.0", "optional": True}
    poetry = {"package": [{"name": "requests"}, torch], "extras": {"local": ["torch"]}}
    assert from_uv_lock(poetry, "poetry.lock").extras == ("local",)
    own = {"name": "demo", "optional-dependencies": {"gpu": [{"name": "torch"}]}}
    assert from_uv_lock({"package": [own, torch]}, "uv.lock").extras == ("gpu",)
    assert from_uv_lock({"package": [torch]}, "uv.lock").extras == ()


def test_a_file_under_benchmarks_or_examples_is_never_the_projects_environment(
    tmp_path: Path,
) -> None:
    """diffusers' setup.py computes its install_requires; init then took
    benchmarks/requirements.txt as the project's environment. A file under docs/, tests/,
    benchmarks/ or examples/ is said not used, never chosen."""
    setup = "from setuptools import setup\nsetup(name='d', install_requires=deps_list('x'))\n"
    files = {"setup.py": setup, "benchmarks/requirements.txt": "pandas\n"}
    said, config = _made(tmp_path, files)
    assert "not used: benchmarks/requirements.txt" in said, said
    assert "benchmarks/requirements.txt" not in config.split("# not used")[0], config


def test_a_torch_wheel_by_url_or_a_nightly_pin_keeps_the_file_with_the_release_it_names(
    tmp_path: Path,
) -> None:
    """Issue 47, one pin never loses a file: a Pipfile's torch as the PyTorch index's wheel
    by URL is that wheel's pin (torch 2.0.1, CUDA 11.8); a pyproject's nightly pin, which no
    release meets, is said at its line with the nearest release, its torchvision the one built
    for it, and every other package of each file installed."""
    wheel = (
        "https://download.pytorch.org/whl/cu118/torch-2.0.1%2Bcu118-cp310-cp310-linux_x86_64.whl"
    )
    pipfile = f'[packages]\ntorch = {{file = "{wheel}"}}\nhydra-core = "*"\n'
    said, config = _made(tmp_path / "pipenv", {"Pipfile": pipfile})
    assert "uses Pipfile" in said and "torch from Pipfile: torch==2.0.1+cu118" in said, said
    assert 'torch: "2.0.1"' in config and 'cuda: "11.8"' in config, config
    nightly = (
        '[project]\nname = "n"\nversion = "0"\ndependencies = [\n'
        '  "torch==2.1.0.dev20230403+cu118",\n  "torchvision==0.16.0.dev20230403+cu118",\n'
        '  "einops",\n]\n'
    )
    said, config = _made(tmp_path / "nightly", {"pyproject.toml": nightly})
    assert "uses pyproject.toml" in said and "left out" not in said, said
    assert 'torch: "2.1.0"' in config and 'cuda: "11.8"' in config, config
    rendered = envkit("render", cwd=tmp_path / "nightly" / "project")
    notes = rendered.stderr
    assert "no release envkit can build admits it (the nearest is torch 2.1.0)" in notes, notes
    assert notes.endswith("torchvision==0.16.0\n") and "einops" not in notes, notes


def test_of_a_familys_cpu_and_cuda_variants_the_newest_cuda_one_is_used(tmp_path: Path) -> None:
    """Issue 47 (RVC's requirments_cpu_py312.txt, _cu118_, _cu128_): on a GPU box the newest
    CUDA variant of a family of files under their own names, its CPU variant last."""
    files = {
        "requirments_cpu_py312.txt": "torch==2.4.1+cpu\nnumpy\n",
        "requirments_cu118_py312.txt": "numpy\n",
        "requirments_cu128_py312.txt": "numpy\nfaiss-cpu\n",
    }
    said, config = _made(tmp_path, files)
    assert said.startswith("uses requirments_cu128_py312.txt (found here"), said
    assert 'cuda: "cpu"' not in config, config


def test_a_file_the_recipe_installs_yields_to_the_file_that_includes_it(tmp_path: Path) -> None:
    """Issue 47 (mmpose): the Dockerfile installs requirements/build.txt (numpy, torch) before
    `pip install -e .`; requirements.txt includes it with runtime.txt: the including file, a
    superset, is used, and the recipe's own packages still come with it."""
    files = {
        "requirements.txt": "-r requirements/build.txt\n-r requirements/runtime.txt\n",
        "requirements/build.txt": "numpy\ntorch>=1.8\n",
        "requirements/runtime.txt": "json_tricks\nmunkres\n",
        "docker/Dockerfile": "FROM python:3.10\nRUN pip install cython\n"
        "RUN pip install -r requirements/build.txt\nRUN pip install -e .\n",
    }
    said, config = _made(tmp_path, files)
    assert said.startswith(
        "uses requirements.txt (found here; it includes requirements/build.txt, which "
        "docker/Dockerfile:3 installs)"
    ), said
    assert "requirements: [requirements.txt]" in config and 'pip: ["cython"]' in config, config
    assert "not used" not in said, said


def test_a_pixi_manifest_with_no_lock_beside_it_is_said_so(tmp_path: Path) -> None:
    """A pixi.toml with no pixi.lock of its own (a pixi tutorial's book/code/*/pixi.toml, a
    separate workspace) is not told that envkit installs a lock it does not have."""
    manifest = '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'
    said, _ = _made(tmp_path, {"pixi.toml": manifest, "ex/pixi.toml": manifest})
    assert "envkit installs its lock" not in said, said
    for name in ("pixi.toml", "ex/pixi.toml"):
        assert f"not used: {name}: pixi's manifest, with no pixi.lock beside it" in said, said


def test_a_dockerfile_envkit_wrote_is_not_read_as_the_projects_base(tmp_path: Path) -> None:
    """envkit's own rendered Dockerfile at the root names envkit's last choices: init must not
    read them back as the project's base image (nor as its recipe)."""
    ours = "# Generated by envkit from envkit.yaml\nFROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n"
    said, config = _made(tmp_path, {"requirements.txt": "torch>=2.0\n", "Dockerfile": ours})
    assert "builds on" not in said and "variant: devel" not in config, said


def test_many_files_not_used_for_one_reason_in_one_folder_are_said_once(tmp_path: Path) -> None:
    """LoRA's 34 requirements files under examples/: one line for the folder with the first
    three named and the count, not a line each; a folder with fewer keeps a line each."""
    files = {f"examples/task{i}/requirements.txt": "six\n" for i in range(5)}
    files |= {"tools/a/reqs.txt": "six\n", "requirements.txt": "tqdm\n"}
    said, config = _made(tmp_path, files)
    assert said.count("not used: examples/") == 1, said
    assert "not used: examples/ (5 files: examples/task0/requirements.txt, " in said, said
    assert "# not used: examples/ (5 files:" in config, config
    assert "not used: tools/a/reqs.txt: " in said, said


def test_a_project_whose_only_environment_is_its_readmes_install_line_gets_it(
    tmp_path: Path,
) -> None:
    """nanoGPT has no environment file: its README's `pip install torch numpy transformers …`
    (in a code block) is what its team runs, proposed as packages.pip; a "pip install" in the
    README's prose is not a command, and a project with a file of its own keeps that file."""
    readme = (
        "# gpt\n\nFirst pip install the package manager.\n\n```sh\n$ pip install torch numpy "
        "tiktoken\n```\n"
    )
    said, config = _made(tmp_path, {"README.md": readme, "train.py": "print(1)\n"})
    assert "uses README.md (found here; the packages that README.md:6's pip install names)" in said
    assert 'pip: ["numpy", "tiktoken"]' in config, config
    said, config = _made(tmp_path / "b", {"README.md": readme, "requirements.txt": "six\n"})
    assert "uses requirements.txt" in said and "tiktoken" not in config, config


def test_a_requirements_line_naming_the_project_itself_is_said(tmp_path: Path) -> None:
    """peft's requirements.txt lists `peft`: installed as written, PyPI's release would shadow
    the team's checkout; init says so at its line, with `-e .` as the fix."""
    setup = "from setuptools import setup\nsetup(name='peft', install_requires=['six'])\n"
    said, _ = _made(tmp_path, {"setup.py": setup, "requirements.txt": "numpy\npeft>=0.10\n"})
    assert (
        "requirements.txt:2: `peft>=0.10` is the project itself: pip installs PyPI's release of "
        "it, not the checkout; `-e .` in its place"
    ) in said, said
    said, _ = _made(tmp_path / "b", {"setup.py": setup, "requirements.txt": "numpy\n"})
    assert "is the project itself" not in said, said


def test_the_readmes_later_pip_lines_that_add_packages_are_carried_with_its_first(
    tmp_path: Path,
) -> None:
    """ConvNeXt's INSTALL.md: torch on one line, `pip install timm==0.3.2 tensorboardX six` a
    few lines on; both are the environment. A later line installing torch another way (the
    CUDA 12 wheels) is an alternative, not an addition, and another page's lines are not read."""
    install = (
        "# Install\n\n```\npip install torch==2.4.1 torchvision==0.19.1\n```\n\n"
        "Or for CUDA 12:\n\n```\npip install torch==2.4.1 --index-url "
        "https://download.pytorch.org/whl/cu121\n```\n\n"
        "Then:\n\n```\npip install timm==0.3.2 tensorboardX six\n```\n"
    )
    said, config = _made(tmp_path, {"INSTALL.md": install, "train.py": "print(1)\n"})
    assert "INSTALL.md:4,16's pip install names" in said, said
    assert '"timm==0.3.2", "tensorboardX", "six"' in config, config
    assert 'torch: "2.4.1"' in config and "cu121" not in config, config


@pytest.mark.parametrize(
    ("header", "python"),
    [
        ("# This file is autogenerated by pip-compile with Python 3.10\n", "3.10"),
        ("#    uv pip compile requirements.in --python-version 3.12 -o requirements.txt\n", "3.12"),
        ("# This file is autogenerated by pip-compile with Python 3.6\n", None),
    ],
    ids=["pip-compile", "uv-pip-compile", "a-python-envkit-does-not-build"],
)
def test_a_compiled_requirements_file_gets_the_python_it_was_resolved_for(
    tmp_path: Path, header: str, python: str | None
) -> None:
    """A pip-tools or uv lock of requirements holds for the Python it was compiled with: init
    proposes that one (its pins may have no wheels for another) on a base that installs it,
    one envkit does not build aside (the default image's own Python then)."""
    _, written = _made(tmp_path, {"requirements.txt": header + "numpy==1.26.4\n"})
    if python is None:
        assert "flavor: pytorch" in written and "3.6" not in written, written
    else:
        assert f'python: "{python}"' in written and "flavor: cuda" in written, written


DEV_CONTAINER = """{
  // the team's dev container: JSON with comments and trailing commas, as VS Code reads it
  "name": "lab",
  "image": "mcr.microsoft.com/devcontainers/python:3.11",
  "postCreateCommand": "pip install --upgrade pip && pip install -e '.[all]'",
  "postStartCommand": {"tools": ["pip", "install", "rich"], "pinned": "pip install einops==0.8.0"},
  "customizations": {"vscode": {"extensions": ["ms-python.python",]}},
}
"""


def test_a_dev_containers_lifecycle_commands_are_read_as_its_shell_would_run_them(
    tmp_path: Path,
) -> None:
    """devcontainer.json's commands are JSON strings (a shell line), lists (one command's words)
    or objects of either: read as such, the project's extras come from `pip install -e
    '.[all]'` in a string, and with no environment file the packages its commands name."""
    pyproject = (
        "[project]\nname = 'lab'\nversion = '0.1'\ndependencies = ['torch>=2.1']\n"
        "[project.optional-dependencies]\nall = ['transformers']\n"
    )
    said, written = _made(
        tmp_path, {"pyproject.toml": pyproject, ".devcontainer/devcontainer.json": DEV_CONTAINER}
    )
    assert '  extras: ["all"]' in written, written
    assert "  install: editable" in written, "as the dev container does: the checkout itself"
    assert "devcontainer.json:5 installs it with [all] editable" in said, said
    _, written = _made(tmp_path / "alone", {".devcontainer/devcontainer.json": DEV_CONTAINER})
    assert '"einops==0.8.0"' in written and '"rich"' in written, written


def test_the_main_files_one_recipe_installs_are_all_taken_not_the_first_alone(
    tmp_path: Path,
) -> None:
    """gpt-neox's Dockerfile installs three requirements files into one image: all three are
    the environment (packages.requirements takes a list), not the first with the others said
    "not used"; its dev file stays out."""
    files = {
        "requirements/requirements.txt": "numpy==1.26.4\n",
        "requirements/requirements-wandb.txt": "wandb==0.17.0\n",
        "requirements/requirements-onebitadam.txt": "cupy-cuda12x==13.2.0\n",
        "requirements/requirements-dev.txt": "pytest\n",
        "Dockerfile": (
            "FROM nvcr.io/nvidia/pytorch:24.02-py3\nCOPY requirements/ requirements/\n"
            "RUN pip install -r requirements/requirements.txt "
            "-r requirements/requirements-wandb.txt\n"
            "RUN pip install -r requirements/requirements-dev.txt\n"
            "RUN pip install -r requirements/requirements-onebitadam.txt\n"
        ),
    }
    said, written = _made(tmp_path, files)
    taken = (
        "requirements: [requirements/requirements.txt, requirements/requirements-wandb.txt, "
        "requirements/requirements-onebitadam.txt]"
    )
    assert taken in written, written
    assert "requirements-dev.txt" not in written.split("requirements: [", 1)[1].split("]")[0]
    assert "the project installs them: Dockerfile:3, Dockerfile:3, Dockerfile:5" in said, said
    assert "requirements-onebitadam.txt name no torch; Dockerfile:1 builds on" in said, said


def test_of_the_projects_dockerfiles_the_first_envkit_can_build_on_gives_torch_and_cuda(
    tmp_path: Path,
) -> None:
    """OpenPCDet's docker/Dockerfile builds on CUDA 10.2, which no torch envkit builds has, and
    its docker/cu116.Dockerfile on CUDA 11.6: init takes the one it can build (its torch and
    CUDA), not the first by name followed by envkit's own newest torch."""
    files = {
        "requirements.txt": "numpy\ntorch>=1.1\n",
        "docker/Dockerfile": "FROM nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04\n",
        "docker/cu116.Dockerfile": "FROM nvidia/cuda:11.6.2-cudnn8-devel-ubuntu20.04\n",
    }
    said, written = _made(tmp_path, files)
    assert 'cuda: "11.6"' in written, written
    assert "docker/cu116.Dockerfile:1 builds on nvidia/cuda:11.6.2" in said, said


def test_a_recipes_pip_packages_are_named_where_another_file_is_taken(tmp_path: Path) -> None:
    """OpenPCDet's spconv is only in its Dockerfile's `pip install`, beside a requirements.txt
    that init takes: the packages that line names are said at it, not lost in a generic note."""
    files = {
        "requirements.txt": "numpy\n",
        "docker/cu116.Dockerfile": (
            "FROM nvidia/cuda:11.6.2-cudnn8-devel-ubuntu20.04\n"
            "RUN pip install spconv-cu116 open3d==0.17.0\n"
        ),
    }
    said, written = _made(tmp_path, files)
    named = "its `pip install` (docker/cu116.Dockerfile:2) names spconv-cu116, open3d==0.17.0"
    assert named in said and named in written, said


def test_a_reason_of_several_lines_is_one_comment_and_the_starter_still_renders(
    tmp_path: Path,
) -> None:
    """packaging's parse error carries caret lines (and a refused file can hold several
    problems, one a line): each reason init writes into envkit.yaml stays one comment line
    (_init renders the file, which a stray second line would break)."""
    said, written = _made(
        tmp_path, {"requirements.txt": "numpy\nfoo bar\nbaz qux\n", "sub/x.txt": "\n"}
    )
    assert "requirements.txt:2: not a requirement pip can read: Expected semicolon" in said
    left = [line for line in written.splitlines() if "left out requirements.txt" in line]
    assert len(left) == 1 and left[0].startswith("# "), written
    assert "^" not in written and "foo bar" not in written, left


@pytest.mark.parametrize(
    ("where", "cuda"),
    [
        ("  - nvidia::cuda=11.8\n", "nvidia::cuda=11.8"),
        ("  - cuda-toolkit=11.8\n", "cuda-toolkit=11.8"),
        ("  - cuda=11.8.0\n", "cuda=11.8.0"),
        ("", "the channel"),
    ],
)
def test_a_conda_files_own_toolkit_cuda_is_proposed_and_a_mismatch_said(
    tmp_path: Path, where: str, cuda: str
) -> None:
    """Issue 47: a conda file's CUDA is the environment's CUDA however the file writes it
    (NVIDIA's toolkit packages, or its versioned channel), proposed with the file's torch; the
    toolkit stays in the environment, and where torch's build is set to another CUDA, render
    says so at the toolkit's line (an extension its nvcc builds may not load beside torch)."""
    folder = tmp_path / "project"
    folder.mkdir()
    channel = "nvidia/label/cuda-11.8.0" if not where else "nvidia"
    (folder / "environment.yml").write_text(
        f"channels: [pytorch, {channel}, conda-forge]\ndependencies:\n  - pytorch=2.1.0\n"
        f"{where}  - numpy\n"
    )
    _init(folder)
    config = (folder / "envkit.yaml").read_text()
    assert 'torch: "2.1.0"' in config and 'cuda: "11.8"' in config, config
    if not where:
        return
    (folder / "envkit.yaml").write_text(config.replace('cuda: "11.8"', 'cuda: "12.1"'))
    rendered = envkit("render", cwd=folder, env={"HOME": str(tmp_path / "home")})
    said = rendered.stdout + rendered.stderr
    assert rendered.returncode == 0, said
    assert (
        f"environment.yml:4: {cuda}: the environment's CUDA toolkit is 11.8, torch's build 12.1"
        in said
    ), said
    assert (
        cuda.split("=")[0].split("::")[-1] in (folder / ".envkit" / "environment.yml").read_text()
    )


def test_a_recipes_option_values_make_variables_and_build_settings_are_read_as_pip_reads_them(
    tmp_path: Path,
) -> None:
    """Issue 47: an option's value is never a package (`--index-strategy unsafe-best-match` must
    not become a package anyone could publish); a Makefile's `$(PIP) install` (make's `-` and
    `@` prefixes too) installs as `pip install` does; a package installed with
    --no-build-isolation keeps that setting in envkit.yaml, on the devel image (nvcc)."""
    makefile = (
        "PIP ?= python -m pip\nsetup:\n\t$(PIP) install -r requirements.txt\n"
        "\t-$(PIPENV_PIP) install flash-attn==2.7.4.post1 --no-build-isolation\n"
        "\t@uv pip install --system --index-strategy unsafe-best-match --resolution lowest einops\n"
    )
    said, config = _made(tmp_path, {"Makefile": makefile, "requirements.txt": "six\n"})
    assert "unsafe-best-match" not in config and "lowest" not in config, config
    assert (
        'pip: [{name: "flash-attn==2.7.4.post1", no_build_isolation: true}, "einops"]' in config
    ), config
    assert "variant: devel          # found here: flash-attn==2.7.4.post1 builds against" in config
    assert "packages.pip: flash-attn==2.7.4.post1 --no-build-isolation, einops" in said, said


@pytest.mark.parametrize("docs_first", [True, False])
def test_of_a_recipes_side_files_the_dev_one_is_taken_before_docs_whatever_the_order(
    tmp_path: Path, docs_first: bool
) -> None:
    """A Makefile whose targets install only side files (torchmetrics': `docs` and `env`): the
    dev environment is the one a dev container works in, not the one that builds the docs,
    whichever target the Makefile writes first."""
    targets = [
        "docs:\n\tpip install -e . -r requirements/_docs.txt\n",
        "env:\n\tpip install -e . -r requirements/_devel.txt\n",
    ]
    files = {
        "Makefile": "\n".join(targets if docs_first else targets[::-1]),
        "requirements/_docs.txt": "sphinx\n",
        "requirements/_devel.txt": "-r base.txt\npytest\n",
        "requirements/base.txt": "numpy\n",
    }
    said, _ = _made(tmp_path, files)
    assert "uses requirements/_devel.txt (found here; the project installs it: Makefile:" in said


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("Pipfile", '[packages]\nnumpy = "*"\n[requires]\npython_version = "3.10"\n'),
        (
            "Pipfile.lock",
            '{"_meta": {"requires": {"python_version": "3.10"}, "sources": []}, '
            '"default": {"numpy": {"version": "==1.26.4"}}, "develop": {}}',
        ),
    ],
)
def test_a_pipfiles_python_is_the_environments(tmp_path: Path, name: str, text: str) -> None:
    """Pipenv's [requires] python_version is the interpreter the team runs: proposed as
    python (on the cuda flavor, whose Python envkit chooses), as requires-python is."""
    _, config = _made(tmp_path, {name: text})
    assert 'python: "3.10"' in config and "flavor: cuda" in config, config


def test_a_setup_py_that_names_no_package_yields_to_a_conda_file_of_its_own_name(
    tmp_path: Path,
) -> None:
    """A bare `setup(name=..., packages=find_packages())` says nothing of the environment;
    environment-gpu.yml does (its torch and CUDA): it is taken, the setup.py said not used."""
    files = {
        "setup.py": "from setuptools import setup, find_packages\n"
        "setup(name='x', packages=find_packages())\n",
        "environment-gpu.yml": "channels: [pytorch, nvidia]\ndependencies:\n  - pytorch=2.1.0\n"
        "  - pytorch-cuda=11.8\n  - numpy\n",
    }
    said, config = _made(tmp_path, files)
    assert "uses environment-gpu.yml" in said and 'cuda: "11.8"' in config, said
    assert "not used" in said and "setup.py" in said.split("not used", 1)[1], said


def test_an_old_image_cuda_that_holds_torch_below_the_files_range_is_said(tmp_path: Path) -> None:
    """torchmetrics' CUDA Dockerfile has `ARG CUDA_VERSION=11.7.1`, its requirements torch
    >=2.0,<2.11: the image's CUDA is the one its team runs (taken, as OpenPCDet's is), and init
    says that it holds torch at 2.0.1, the newest with a CUDA 11.7 build, below what the file
    admits, with the setting that moves it."""
    recipe = "ARG CUDA_VERSION=11.7.1\nFROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu22.04\n"
    files = {"docker/Dockerfile": recipe, "requirements.txt": "numpy\ntorch>=2.0,<2.11\n"}
    said, config = _made(tmp_path, files)
    assert 'cuda: "11.7"' in config and 'torch: "2.0.1"' in config, config
    assert "(torch 2.0.1 is the newest with a CUDA 11.7 build; the file admits" in said, said
    assert "change `cuda:` to have it)" in said, said


def test_every_recipes_apt_lines_are_said_not_only_the_first_with_pip_names(
    tmp_path: Path,
) -> None:
    """cleanrl's two Dockerfiles: the first names packages on its pip line, the second
    installs system packages: both recipes' apt-get lines are said at their line."""
    files = {
        "Dockerfile": "FROM python:3.10\nRUN apt-get install -y ffmpeg\nRUN pip install einops\n",
        "docker/Dockerfile": "FROM python:3.10\nRUN apt-get update && apt-get install -y xvfb\n",
    }
    said, _ = _made(tmp_path, files)
    assert "Dockerfile:2: `apt-get install -y ffmpeg`" in said, said
    assert "docker/Dockerfile:2: `apt-get install -y xvfb`" in said, said


def test_a_recipes_apt_line_of_what_the_starter_lists_is_not_said_as_left_out(
    tmp_path: Path,
) -> None:
    """trl's recipe installs only git, which every starter's packages.apt lists: saying it was
    not carried contradicted the file init wrote. A line with anything more is still said."""
    files = {
        "Dockerfile": "FROM python:3.10\nRUN apt-get update && apt-get install -y git\n"
        "RUN apt-get install -y git libgl1\nRUN pip install einops\n",
    }
    said, written = _made(tmp_path, files)
    assert "apt-get install -y git`" not in said, said
    assert "Dockerfile:3: `apt-get install -y git libgl1`: not carried" in said, said
    assert "  apt: [git, tmux]" in written, written


def test_a_recipes_chained_installs_keep_their_own_options_and_every_extra_counts(
    tmp_path: Path,
) -> None:
    """open-r1's Makefile chains its installs with `&&`: --no-build-isolation is flash-attn's
    alone, not vllm's; LLaVA's recipe installs the project, then again with [train]: editable
    with [train], and the packages that recipe installs by name come with the project."""
    makefile = (
        "install:\n\tpip install vllm==0.8.5.post1 && \\\n"
        "\tpip install flash-attn --no-build-isolation && \\\n"
        '\tpip install -e .\n\tpip install -e ".[train]"\n'
    )
    pyproject = _pyproject("llava", "numpy", train=["deepspeed"])
    said, config = _made(tmp_path, {"Makefile": makefile, "pyproject.toml": pyproject})
    assert 'extras: ["train"]' in config and "install: editable" in config, config
    assert 'pip: ["vllm==0.8.5.post1", {name: "flash-attn", no_build_isolation: true}]' in config, (
        config
    )
    assert "uses pyproject.toml (found here; Makefile:2,5 installs it with [train]" in said, said
    assert "not used: Makefile" not in said, said


def test_keras_alone_does_not_mean_a_project_without_torch(tmp_path: Path) -> None:
    """Keras 3 runs on torch, JAX or TensorFlow: keras alone names no other framework, so the
    environment keeps its torch (tensorflow beside it still means torch: none)."""
    _, config = _made(tmp_path / "keras", {"requirements.txt": "keras>=3.0.0\nnumpy\n"})
    assert 'torch: "none"' not in config, config
    _, config = _made(tmp_path / "tf", {"requirements.txt": "keras>=3.0.0\ntensorflow==2.16.1\n"})
    assert 'torch: "none"' in config, config


def test_a_recipes_conda_install_is_said_with_nvcc_named(tmp_path: Path) -> None:
    """LLaVA's dev container installs NVIDIA's compiler by conda: said at its line, not carried,
    with what gives nvcc here."""
    files = {
        "Makefile": "install:\n\tconda install -y -c nvidia cuda-compiler\n"
        "\tpip install -r requirements.txt\n",
        "requirements.txt": "numpy\n",
    }
    said, _ = _made(tmp_path, files)
    assert (
        "Makefile:2: `conda install -y -c nvidia cuda-compiler`: not carried: list its packages "
        "under conda.packages; nvcc: base.variant devel" in said
    ), said


def test_of_several_recipes_the_main_cuda_one_decides_and_build_arguments_are_read(
    tmp_path: Path,
) -> None:
    """A project with a recipe per target (a docs builder's, CPU ones, a CUDA one, in the order
    their folders sort) is read from its main CUDA recipe, whichever sorts first; an image
    recipe's ARG and ENV values are in its commands (`pip install "${INSTALL}"`,
    `pip${PYTHON} install`), a `$(...)` keeps the rest of its line, and a recipe's tools for
    making environments are not the environment."""
    cuda = (
        "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nARG EXTRA=accelerate\nENV PY=3.11\n"
        "RUN pip$PY install torch==2.5.1 einops --index-url https://download.pytorch.org/whl/cu124\n"
        'RUN pip install "${EXTRA}" virtualenv\n'
        "RUN apt-get install -y cuda-tools-$(echo ${CUDA} | cut -d. -f1) git wget\n"
    )
    files = {
        "docker/app-doc-builder/Dockerfile": "FROM python:3.10\nRUN pip install torch sphinx\n",
        "docker/app-flax-cpu/Dockerfile": "FROM python:3.10-slim\nRUN pip install jax flax\n",
        "docker/app-onnx-cuda/Dockerfile": "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n"
        "RUN pip install onnxruntime-gpu\n",
        "docker/app-torch-cuda/Dockerfile": cuda,
    }
    said, config = _made(tmp_path, files)
    assert "uses docker/app-torch-cuda/Dockerfile" in said, said
    assert 'torch: "2.5.1"' in config and 'cuda: "12.4"' in config, config
    pip = next(line for line in said.splitlines() if line.startswith("packages.pip:"))
    assert "einops" in pip and "accelerate" in pip and "virtualenv" not in pip, pip
    assert "sphinx" not in pip and "flax" not in pip, pip
    apt = next(line for line in said.splitlines() if "app-torch-cuda/Dockerfile:6" in line)
    assert "git wget" in apt, apt  # the words after the `$(...)` are still said


def test_a_pinned_torchvision_or_torchaudio_chooses_the_torch_it_was_built_for(
    tmp_path: Path,
) -> None:
    """`torch>=2.0.1` with `torchvision==0.15.2`: torch 2.0.1, the release that torchvision was
    built for, so the file is kept whole (it had been left out for asking another torch than
    the newest); a companion pinned without a torch line still says torch's release."""
    for files, torch in (
        ({"requirements.txt": "torch>=2.0.1\ntorchvision==0.15.2\neinops\n"}, "2.0.1"),
        ({"requirements.txt": "torchaudio==2.4.1\nlibrosa\n"}, "2.4.1"),
    ):
        said, config = _made(tmp_path / torch, files)
        assert "uses requirements.txt" in said and "left out" not in said, said
        assert f'torch: "{torch}"' in config, config


def test_a_project_without_torch_takes_its_own_images_cuda_or_the_nearest_envkit_has(
    tmp_path: Path,
) -> None:
    """A JAX project whose Dockerfile builds on nvidia/cuda 12.2 (not in envkit's table): torch
    none on CUDA 12.1, the nearest image envkit has, said; not envkit's default CUDA, and its
    requirements file is kept."""
    recipe = "ARG CUDA=12.2.2\nFROM nvidia/cuda:${CUDA}-cudnn8-runtime-ubuntu22.04\n"
    recipe += "RUN pip install -r requirements.txt\n"
    files = {"requirements.txt": "jax==0.4.26\nflax\n", "docker/Dockerfile": recipe}
    said, config = _made(tmp_path, files)
    assert "uses requirements.txt" in said and "left out" not in said, said
    assert 'torch: "none"' in config and 'cuda: "12.1"' in config, config
    assert "(CUDA 12.1: the nearest envkit has an image of)" in said, said


def test_a_recipes_page_of_links_stays_with_its_packages(tmp_path: Path) -> None:
    """`pip install jaxlib==…+cuda12 -f https://…/jax_cuda_releases.html`: envkit.yaml keeps the
    page on each package that install names (find_links), so the build finds the CUDA wheel;
    a local folder of wheels (`-f dist/`) cannot be carried, and is said."""
    page = "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"
    recipe = (
        "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
        f"RUN pip install jax==0.4.26 jaxlib==0.4.26+cuda12.cudnn89 -f {page}\n"
        "RUN pip install einops\n"
    )
    said, config = _made(tmp_path / "page", {"Dockerfile": recipe})
    assert f'{{name: "jaxlib==0.4.26+cuda12.cudnn89", find_links: "{page}"}}' in config, config
    assert '"einops"' in config and "not carried" not in said, said
    local = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN pip install theme==1.0 -f dist/\n"
    said, config = _made(tmp_path / "local", {"Dockerfile": local})
    assert "its -f pages are not carried" in said, said


def test_a_setup_pys_extras_that_its_recipe_installs_it_with_are_installed_the_others_said(
    tmp_path: Path,
) -> None:
    """`pip install -e ".[train]"` in the project's recipe: setup.py's literal extras_require
    for train comes with its install_requires; its other extras are said, not dropped; extras
    computed when setup.py runs are said with the line that asks for them."""
    setup = (
        "from setuptools import setup\nEXTRAS = {'train': ['wandb==0.17.0'], 'docs': ['sphinx']}\n"
        "setup(name='acme', install_requires=['torch>=2.1', 'einops'], extras_require=EXTRAS)\n"
    )
    recipe = 'FROM python:3.11\nCOPY . /src\nRUN pip install -e ".[train]"\n'
    said, config = _made(tmp_path / "literal", {"setup.py": setup, "Dockerfile": recipe})
    pip = next(line for line in said.splitlines() if line.startswith("packages.pip:"))
    assert "einops" in pip and "wandb==0.17.0" in pip and "sphinx" not in pip, pip
    assert "and extras train (Dockerfile:3 installs it with them)" in pip, pip
    assert '"wandb==0.17.0"' in config, config
    assert "setup.py: its extras docs are not installed" in said, said
    computed = setup.replace("extras_require=EXTRAS", "extras_require=dict(EXTRAS)")
    said, _ = _made(tmp_path / "computed", {"setup.py": computed, "Dockerfile": recipe})
    assert "setup.py: Dockerfile:3 installs it with extras train, which its" in said, said


def test_a_projects_dependency_groups_are_named_with_the_setting_that_installs_them(
    tmp_path: Path,
) -> None:
    """PEP 735's [dependency-groups] (and Poetry's, PDM's) and the extras nothing asks for:
    not installed unless asked, and said so, with python.groups and python.extras."""
    pyproject = (
        '[project]\nname = "x"\nversion = "0.1"\ndependencies = ["torch==2.4.1", "six"]\n'
        '[dependency-groups]\ndev = ["pytest"]\nbuild = ["ninja"]\n'
    )
    pyproject += '[project.optional-dependencies]\nviz = ["matplotlib"]\ntrain = ["wandb"]\n'
    said, _ = _made(tmp_path, {"pyproject.toml": pyproject})
    assert (
        "not used: pyproject.toml's extras (train, viz): name those you want installed" in said
    ), said
    assert "not used: pyproject.toml's dependency groups (build, dev): name those" in said


def test_a_makefiles_docs_and_release_rules_install_nothing_of_the_environment(
    tmp_path: Path,
) -> None:
    """`make setup` installs the environment; `make sphinx-theme` and `make release` install
    their own tools: only the setup rule's packages are proposed."""
    makefile = (
        "setup: update\n\tpip install einops \\\n\t    pre-commit\n\n"
        "sphinx-theme: setup\n\tpip install lai-sphinx-theme awscli\n\n"
        "release:\n\tpip install twine-plugin\n"
    )
    said, _ = _made(tmp_path, {"Makefile": makefile})
    pip = next(line for line in said.splitlines() if line.startswith("packages.pip:"))
    assert "einops" in pip and "pre-commit" in pip, pip
    assert "sphinx" not in pip and "awscli" not in pip and "twine" not in pip, pip


def test_a_test_file_that_the_main_files_own_command_installs_is_used_with_them(
    tmp_path: Path,
) -> None:
    """`pip install -r requirements.txt -r requirements/test.txt` (one command over lines): the
    test file is part of the environment that command makes, not an alternative to it."""
    files = {
        "requirements.txt": "torch==2.4.1\neinops\n",
        "requirements/test.txt": "pytest\n",
        "requirements/docs.txt": "sphinx\n",
        "Makefile": "setup:\n\tpip install -r requirements.txt \\\n\t  -r requirements/test.txt\n"
        "\tpip install -r requirements/docs.txt\n",
    }
    said, config = _made(tmp_path, files)
    assert "uses requirements.txt and requirements/test.txt (" in said, said
    assert "requirements: [requirements.txt, requirements/test.txt]" in config, config
    assert "requirements/docs.txt" not in config.split("requirements:", 1)[1].split("\n", 1)[0]


def test_a_recipe_of_the_project_beats_a_launch_script_and_a_pinned_companion_beats_the_base(
    tmp_path: Path,
) -> None:
    """A Dockerfile under docker/ (not a docs recipe: "docker" holds no side word) is read
    before a launch script under scripts/; and a base image whose torch the file's own
    torchaudio pin does not admit gives way to the pin."""
    files = {
        "pyproject.toml": '[project]\nname = "acme"\nversion = "1"\ndependencies = ["torch>=2.1"]\n'
        '[project.optional-dependencies]\ntrain = ["wandb"]\n',
        "docker/Dockerfile.gantry": "FROM python:3.11\n"
        "RUN pip install flash-attn --no-build-isolation\nRUN pip install .[train]\n",
        "scripts/launch/run-on-gpus.sh": "#!/bin/sh\npip install '.[train]'\nnvidia-smi\n",
    }
    said, config = _made(tmp_path / "order", files)
    assert "docker/Dockerfile.gantry:3 installs it with [train]" in said, said
    assert "no_build_isolation: true" in config, config
    files = {
        "docker/Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.06-py3\n",
        "install.sh": "pip install torchaudio==2.4.1 librosa\n",
    }
    said, config = _made(tmp_path / "pin", files)
    assert 'torch: "2.4.1"' in config, config


def test_a_recipes_package_by_url_is_said_with_how_to_carry_it(tmp_path: Path) -> None:
    """`pip install git+https://…#subdirectory=bindings/torch` names no package envkit can
    write (its name is the build's): said at its line, with `NAME @ URL`; an index URL given
    to an option is not a package."""
    url = "git+https://github.com/NVlabs/tiny-cuda-nn.git@b3473c8#subdirectory=bindings/torch"
    recipe = (
        "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
        "RUN pip install torch==2.5.1 --extra-index-url https://download.pytorch.org/whl/cu124\n"
        f"RUN pip install einops {url}\n"
    )
    said, config = _made(tmp_path, {"Dockerfile": recipe})
    assert f"not used: Dockerfile:3: `pip install {url}`: not carried: a package by URL" in said
    assert "download.pytorch.org/whl/cu124`: not carried" not in said, said
    assert '"einops"' in config and "tiny-cuda-nn" not in config.split("# ")[0], config


def test_a_pixi_task_that_installs_packages_is_said_with_its_line(tmp_path: Path) -> None:
    """pixi.toml's tasks run when asked, after the environment (nerfstudio's `tcnn-install`):
    what they install is in no lock, so each is said, with its line; other tasks are not."""
    pixi = (
        '[project]\nname = "x"\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n'
        '[tasks]\ntrain = "python train.py"\n'
        'tcnn-install = "python -m pip install ninja git+https://github.com/NVlabs/tiny-cuda-nn/"\n'
        '[feature.dev.tasks]\nsetup = { cmd = "pip install -e .", cwd = "third_party/hloc" }\n'
        '[feature.dev.tasks.nightly]\ncmd = """pip install --pre a\n  && pip install b"""\n'
    )  # a task of several lines, said on one: envkit.yaml's comment stays one line
    said, _ = _made(tmp_path, {"pixi.toml": pixi, "requirements.txt": "torch==2.5.1\n"})
    assert "not used: pixi.toml:8: task tcnn-install (`python -m pip install ninja" in said, said
    assert "not used: pixi.toml:10: task setup (`pip install -e .` in third_party/hloc)" in said
    assert "task train" not in said
    assert "not used: pixi.toml: pixi's manifest, with no pixi.lock beside it" in said, said
    assert "not used: pixi.toml:11: task nightly (`pip install --pre a && pip install b`)" in said


def test_the_files_the_readmes_install_lines_name_are_the_projects(tmp_path: Path) -> None:
    """A README whose fenced install line names `requirements/gpu.txt` (a file under no usual
    name): that file is the project's environment, said with the README's line; a dev or demo
    environment it also names is not, and prose outside a fenced block is not a command."""
    readme = (
        "# acme\nInstall with pip install -r requirements/cpu.txt if you must.\n\n"
        "```bash\npip install -r requirements/gpu.txt\n"
        "conda env create -f environment-dev.yml\n```\n"
    )
    files = {
        "README.md": readme,
        "requirements/gpu.txt": "torch==2.4.1\neinops\n",
        "requirements/cpu.txt": "torch==2.4.1\n",
        "environment-dev.yml": "dependencies:\n  - pytest\n",
    }
    said, config = _made(tmp_path, files)
    assert "uses requirements/gpu.txt (found here; the project installs it: README.md:5)" in said
    assert "requirements: [requirements/gpu.txt]" in config, config


def test_a_conda_files_torch_pinned_in_a_file_its_pip_section_includes_is_its_torch(
    tmp_path: Path,
) -> None:
    """open_flamingo's environment.yml: python=3.9 and a pip section of `-r` lines, torch pinned
    in requirements.txt. Its torch is that pin (not envkit's default, which has no Python 3.9
    wheels and had left the file out), and the included files are its own, not said unused."""
    conda = (
        "name: of\ndependencies:\n  - python=3.9\n  - conda-forge::openjdk\n  - pip\n  - pip:\n"
        "    - -r requirements.txt\n    - -r requirements-training.txt\n"
    )
    files = {
        "environment.yml": conda,
        "requirements.txt": "torch==2.0.1\ntorchvision==0.15.2\neinops\n",
        "requirements-training.txt": "wandb\n",
        "README.md": "```\nconda env create -f environment.yml\n```\n",
    }
    said, config = _made(tmp_path, files)
    assert "uses environment.yml (found here; the project installs it: README.md:2)" in said, said
    assert 'torch: "2.0.1"' in config and 'python: "3.9"' in config, config
    assert "requirements-training.txt" not in said, said


def test_the_extras_a_recipes_uv_sync_names_are_the_locked_projects(tmp_path: Path) -> None:
    """`uv sync --frozen --extra colour` in the project's Dockerfile: the uv.lock is installed
    with that extra (python.extras), as the team's image has it."""
    folder = tmp_path / "project"
    shutil.copytree(Path(__file__).parents[1] / "data" / "projects" / "uvproj", folder)
    (folder / "Dockerfile").write_text("FROM python:3.11\nRUN uv sync --frozen --extra colour\n")
    said = _init(folder)
    assert (
        "uses pyproject.toml and uv.lock (found here; Dockerfile:2 installs it with [colour])"
        in said
    )
    assert 'extras: ["colour"]' in (folder / "envkit.yaml").read_text()


def test_a_package_built_for_one_cuda_proposes_its_major_and_a_mismatch_is_said_at_its_line(
    tmp_path: Path,
) -> None:
    """Issue 47, as gpt-neox has it (cupy-cuda111 beside an unlabelled torch): the CUDA a
    package's name says it was built for is the environment's, the nearest of its major envkit
    can build; with `cuda:` set to another major, render keeps the line and says why it would
    fail when used, at its line, with the fix."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "requirements.txt").write_text("torch>=2.0\nnumpy\ncupy-cuda11x>=12\n")
    said = _init(folder)
    config = (folder / "envkit.yaml").read_text()
    assert 'cuda: "11.8"' in config, said + config
    assert "cupy-cuda11x>=12: CUDA 11" in said, said
    text = config.replace('cuda: "11.8"', 'cuda: "12.6"')
    (folder / "envkit.yaml").write_text(text)
    (folder / "requirements.txt").write_text(
        "torch>=2.0\nnumpy\ncupy-cuda111\njax[cuda12]\ncupy-cuda11x\n"
    )
    rendered = envkit("render", cwd=folder, env={"HOME": str(tmp_path / "home")})
    out = rendered.stdout + rendered.stderr
    assert rendered.returncode == 0, out
    assert "requirements.txt:3: cupy-cuda111 is built for CUDA 11.1 and the image has CUDA" in out
    assert "fails when used; install its build for CUDA 12\n" in out, "11.8's is not 11.1's"
    assert "cupy-cuda11x is built for CUDA 11 and the image has CUDA 12.6" in out, out
    assert "install its build for CUDA 12, or set `cuda:` to 11.8" in out, out
    assert "jax[cuda12]" not in out, "a CUDA 12 build on a CUDA 12 image is said nothing of"
    project = (folder / ".envkit" / "envkit" / "project" / "requirements.txt").read_text()
    assert "cupy-cuda111" in project.splitlines(), "the line is the project's: kept"


@pytest.mark.parametrize(
    ("line", "cuda"),
    [("cupy-cuda12x", "12"), ("cupy-cuda111==9.6", "11.1"), ("cudf-cu12", "12"),
     ("spconv-cu118", "11.8"), ("nvidia-dali-cuda120", "12.0"), ("jax-cuda12-plugin", "12"),
     ("jax[cuda12_pip]>=0.4", "12"), ("mxnet_cu112", "11.2"), ("pycuda", None),
     ("cuda-python==12.4", None), ("cupy", None), ("docutils", None)],
)  # fmt: skip
def test_the_cuda_a_packages_name_says_it_was_built_for(line: str, cuda: str | None) -> None:
    from packaging.requirements import Requirement

    from envkit.plan.project.cuda_wheels import built_for

    assert built_for(Requirement(line)) == cuda


def test_extras_a_recipe_builds_in_a_shell_variable_leave_the_project_file_whole(
    tmp_path: Path,
) -> None:
    """Issue 47, as private-gpt has it (`for e in $EXTRAS; do extra_flags="... --extra $e"`;
    `uv sync $extra_flags`): an extra envkit cannot read is no extra; the project's file is
    used and its extras named for python.extras, not left out over `$e`."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(
        _pyproject("pg", "fastapi", llms=["llama-cpp-python"], ui=["gradio"])
    )
    (folder / "Dockerfile").write_text(
        'FROM python:3.11-slim\nARG EXTRAS="llms ui"\nCOPY pyproject.toml ./\n'
        'RUN f=""; for e in $EXTRAS; do f="$f --extra $e"; done; uv sync $f\n'
        "RUN pip install -e .[$EXTRAS]\n"
    )
    (folder / "uv.lock").write_text(
        'version = 1\nrequires-python = ">=3.11"\n\n[[package]]\nname = "pg"\nversion = "0.1"\n'
        'source = { editable = "." }\ndependencies = [{ name = "fastapi" }]\n\n'
        '[package.optional-dependencies]\nllms = [{ name = "llama-cpp-python" }]\n'
        'ui = [{ name = "gradio" }]\n\n[package.metadata]\nrequires-dist = [{ name = "fastapi" }, '
        '{ name = "llama-cpp-python", marker = "extra == \'llms\'" }, '
        '{ name = "gradio", marker = "extra == \'ui\'" }]\nprovides-extras = ["llms", "ui"]\n'
    )
    said = _init(folder)
    assert "left out" not in said and "uses pyproject.toml and uv.lock" in said, said
    assert "pyproject.toml's extras (llms, ui): name those you want installed" in said, said


@pytest.mark.parametrize(
    ("page", "text"),
    [("docs/en/installation.rst", "Install\n=======\n\nRun this::\n\n.. code-block:: bash\n\n"
      "   pip install torch==2.4.1 einops timm\n\nThen pip install nothing else.\n"),
     ("docs/get_started.md", "# Start\n\npip install prose\n\n```bash\n"
      "pip install torch==2.4.1 einops timm\n```\n"),
     ("INSTALL.md", "```\npip install torch==2.4.1 einops timm\n```\n")],
)  # fmt: skip
def test_install_lines_in_the_projects_docs_are_read_as_its_readmes_are(
    tmp_path: Path, page: str, text: str
) -> None:
    """Issue 47: a project whose install instructions live in an INSTALL file or its docs'
    install or getting-started page (Markdown or reStructuredText), its README saying only
    "see the docs", gets the packages and torch of their code blocks, not of their prose."""
    folder = tmp_path / "project"
    (folder / page).parent.mkdir(parents=True)
    (folder / "README.md").write_text("# proj\n\nSee the docs: pip install the package.\n")
    (folder / page).write_text(text)
    said = _init(folder)
    config = (folder / "envkit.yaml").read_text()
    assert 'pip: ["einops", "timm"]' in config and 'torch: "2.4.1"' in config, said + config
    assert f"{page}:" in said and "prose" not in config, said


def test_own_named_files_outrank_a_recipes_bare_pip_line_and_the_cuda_one_its_kin(
    tmp_path: Path,
) -> None:
    """Issue 47, as lmdeploy and pytorch3d have it: requirement files under names of the
    project's own come before a recipe's bare `pip install cmake ninja` (a build's tools, not
    the environment); of them the CUDA one before other vendors' (ascend, rocm) and the file
    that includes another before it; a dev or packaging script's installs are not advised."""
    folder = tmp_path / "project"
    (folder / "requirements").mkdir(parents=True)
    (folder / "docker").mkdir()
    (folder / "dev").mkdir()
    (folder / "requirements" / "common.txt").write_text("numpy\n")
    (folder / "requirements_ascend.txt").write_text("-r requirements/common.txt\ntorch-npu\n")
    (folder / "requirements_cuda.txt").write_text("-r requirements/common.txt\ntorch>=2.0\n")
    (folder / "docker" / "Dockerfile").write_text("FROM ubuntu:24\nRUN pip install cmake ninja\n")
    (folder / "dev" / "tutorials.sh").write_text("conda install -y pytorch=1.6.0 cudatoolkit=10\n")
    said = _init(folder)
    assert said.startswith("uses requirements_cuda.txt"), said
    assert "cmake" not in (folder / "envkit.yaml").read_text(), said
    assert "pytorch=1.6.0" not in said, "a dev script's install is not the environment's"
    (folder / "requirements_cuda.txt").unlink()
    (folder / "requirements_ascend.txt").unlink()
    (folder / "requirements" / "runtime.txt").write_text("-r common.txt\ntorch>=2.0\n")
    for made in ("envkit.yaml", "envkit.schema.json"):
        (folder / made).unlink()
    shutil.rmtree(folder / ".envkit")
    said = _init(folder)
    assert said.startswith("uses requirements/runtime.txt"), "the includer, not what it includes"


def test_a_file_a_recipe_copies_to_an_absolute_folder_is_traced_to_the_projects_own(
    tmp_path: Path,
) -> None:
    """Issue 47, as lmdeploy's Dockerfile has it: `COPY requirements/runtime.txt /tmp/req/`,
    then `pip install -r /tmp/req/runtime.txt`: the project's requirements/runtime.txt."""
    folder = tmp_path / "project"
    (folder / "requirements").mkdir(parents=True)
    (folder / "docker").mkdir()
    (folder / "requirements" / "common.txt").write_text("numpy\n")
    (folder / "requirements" / "runtime.txt").write_text("-r common.txt\ntorch>=2.0\n")
    (folder / "docker" / "Dockerfile").write_text(
        "FROM ubuntu:24.04\nCOPY requirements/common.txt requirements/runtime.txt /tmp/req/\n"
        "RUN pip install -r /tmp/req/runtime.txt\n"
    )
    said = _init(folder)
    assert said.startswith("uses requirements/runtime.txt (found here; the project installs it: "
                           "docker/Dockerfile:3)"), said  # fmt: skip


def test_a_setup_py_project_takes_the_torch_and_cuda_its_install_docs_conda_line_names(
    tmp_path: Path,
) -> None:
    """Issue 47, as pytorch3d has it: a setup.py naming no torch, whose INSTALL.md says
    `conda install pytorch=1.13.0 torchvision pytorch-cuda=11.6 -c pytorch -c nvidia`: that
    torch and CUDA (the extension is built against them), not envkit's newest."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='proj', install_requires=['iopath'])\n"
    )
    (folder / "INSTALL.md").write_text(
        "# Install\n\n```\nconda create -n proj python=3.9\n"
        "conda install pytorch=1.13.0 torchvision pytorch-cuda=11.6 -c pytorch -c nvidia\n```\n"
    )
    said = _init(folder)
    config = (folder / "envkit.yaml").read_text()
    assert 'torch: "1.13.0"' in config and 'cuda: "11.6"' in config, said + config
    assert "INSTALL.md:5: conda install pytorch=1.13.0" in said, said


def test_a_pixi_locks_manifest_in_pyproject_and_the_project_it_installs_are_used_with_it(
    tmp_path: Path,
) -> None:
    """Issue 47, as mini-dpvo has it: pixi.lock made from pyproject.toml's [tool.pixi], which
    installs the project itself (`{ path = ".", editable = true }`, a setup.py's extension):
    pyproject.toml and setup.py are the lock's, not "also here, not used"."""
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(REPO / "tests/data/corpus/pixi-pytorch-gpu/pixi.lock", folder)
    manifest = (REPO / "tests/data/corpus/pixi-pytorch-gpu/pixi.toml").read_text()
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "proj"\nversion = "0.1"\n\n'
        + manifest.replace("[workspace]", "[tool.pixi.workspace]")
        .replace("[tasks]", "[tool.pixi.tasks]")
        .replace("[system-requirements]", "[tool.pixi.system-requirements]")
        .replace("[dependencies]", "[tool.pixi.dependencies]")
        + '\n[tool.pixi.pypi-dependencies]\nproj = { path = ".", editable = true }\n'
    )
    (folder / "setup.py").write_text("from setuptools import setup\nsetup(name='proj')\n")
    said = _init(folder)
    assert said.startswith("uses pixi.lock"), said
    assert not any("pyproject.toml" in line for line in said.splitlines()[1:]), said


def test_a_pytorch_image_tagged_by_minor_is_read_and_its_torch_met_by_the_nearest_release(
    tmp_path: Path,
) -> None:
    """Issue 47, as DETR has it: `FROM pytorch/pytorch:1.5-cuda10.1-cudnn7-runtime` (a tag of
    major.minor) is the torch the team runs; older than any envkit builds, the nearest release
    is proposed and said, not envkit's newest in silence."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "requirements.txt").write_text("torch>=1.5.0\ntorchvision>=0.6.0\ncython\n")
    (folder / "Dockerfile").write_text(
        "FROM pytorch/pytorch:1.5-cuda10.1-cudnn7-runtime\nCOPY requirements.txt /workspace\n"
        "RUN pip install -r /workspace/requirements.txt\n"
    )
    said = _init(folder)
    config = (folder / "envkit.yaml").read_text()
    assert "Dockerfile:1 builds on pytorch/pytorch:1.5-cuda10.1" in said, said
    assert "the nearest release envkit can build" in config, config
    from envkit.catalog import compat

    oldest = min(compat.load_table().torch, key=compat.version_key)
    assert f'torch: "{oldest}"' in config, config
