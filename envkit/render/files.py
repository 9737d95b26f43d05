"""Render a Plan into the build context's files: one Jinja2 environment, pure (writes nothing).

Templates only lay data out. Filters do the quoting: `sh` for shell words, `yq` for YAML
scalars; the Dockerfile's layers come composed and quoted (envkit/plan/image/layers.py). Every value
was also validated by the config model.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import jinja2

from envkit import __version__
from envkit.plan import Plan
from envkit.plan.box.access import ACTIVITY_FILE
from envkit.plan.box.containers import containers_model
from envkit.plan.box.notebook import (
    CONTAINER_PORT,
    TENSORBOARD_CONTAINER_PORT,
    TOKEN_FILE,
    NotebookPlan,
)
from envkit.plan.image.certs import SYSTEM_BUNDLE
from envkit.plan.image.conda_bootstrap import CONDA_TOOL_DIR, RATTLER_VENV, rattler_requirements
from envkit.plan.image.conda_layers import (
    CONDA_PIP,
    PROJECT_CONDA_EXPLICIT,
    PROJECT_CONDA_PYPI,
    PROJECT_CONDA_UNHASHED,
)
from envkit.plan.image.install import CLASSIC_DOCKERFILE, DOCKERFILE
from envkit.plan.image.layers import dockerfile_layers
from envkit.plan.models.plan import LockedPlan
from envkit.plan.project.conda_locks import CondaLockPackages
from envkit.render.template_cache import template_cache
from envkit.runtime import BUILD_PROGRAMS

PACKAGE = Path(__file__).resolve().parent.parent  # envkit/, whose programs are shipped as they are
EXECUTABLE = frozenset(
    {
        "envkit/runtime/entrypoint.sh",
        "envkit/runtime/healthcheck.sh",
        "envkit/runtime/activity.py",
        "envkit/runtime/install-keys.sh",
        "envkit/runtime/notebook.sh",
        "envkit/apt/apt-mirror.sh",
        "envkit/apt/cuda-repo.sh",
        "envkit/conda/envkit-conda",
    }
)


def _json_string(value: object) -> str:
    """One line, every quote and backslash escaped, non-ASCII as \\u escapes. It is also a valid
    YAML double-quoted scalar: nothing inside can start new YAML, and no character YAML forbids
    raw (C1 controls, BOMs) reaches the file."""
    return json.dumps(str(value), ensure_ascii=True)


def _json_file(settings: dict[str, object]) -> str:
    return json.dumps(settings, indent=1, sort_keys=True) + "\n"


def template_loader() -> jinja2.FileSystemLoader:
    """Where every envkit template is found: the root templates, then templates/ (the HTML
    report's environment, envkit/report/html.py, loads through it too). Wheels carry them in
    envkit/_templates; a checkout has them at its root."""
    packaged = PACKAGE / "_templates"
    root = packaged if packaged.is_dir() else PACKAGE.parent
    return jinja2.FileSystemLoader([str(root), str(root / "templates")])


def make_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=template_loader(),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - we render Dockerfiles and YAML, not HTML
        keep_trailing_newline=True,
        trim_blocks=False,
        bytecode_cache=template_cache(),
    )
    env.filters["sh"] = lambda value: shlex.quote(str(value))
    env.filters["yq"] = env.filters["jq"] = _json_string
    # Compose interpolates $VAR in values; $$ keeps a user's literal '$'.
    env.filters["compose_literal"] = lambda value: str(value).replace("$", "$$")
    return env


def _torch_note(plan: Plan) -> str:
    if plan.torch.preinstalled:
        return f"torch {plan.torch.version} comes with the base image {plan.image.base}."
    if plan.torch.source == "pypi":
        return (
            f"torch {plan.torch.version} (PyPI's CUDA {plan.torch.cuda} build) is installed "
            "from the pip index in /etc/pip.conf after this environment, then pinned."
        )
    return f"torch {plan.torch.version} is installed from {plan.torch.index_url}, not from here."


def _environment_notes(plan: Plan) -> tuple[str, ...]:
    """environment.yml's comments on what the image adds to it: torch, and after torch the
    pip section, which the file then leaves out."""
    notes: tuple[str, ...] = (_torch_note(plan),) if plan.torch.version else ()
    if plan.conda.pip_after_torch:
        pip = ", ".join(plan.conda.pip)
        notes += (
            f"Then its pip section, under torch's constraints ({CONDA_PIP} beside this "
            f"file): {pip[:300]}",
        )
    return notes


def _notebook_files(notebook: NotebookPlan, render: Callable[..., str]) -> dict[str, str]:
    settings = {
        "kernel": notebook.kernel,
        "port": CONTAINER_PORT,
        "token_file": TOKEN_FILE,
        "tensorboard_port": TENSORBOARD_CONTAINER_PORT if notebook.tensorboard else None,
    }
    script = render(
        "notebook.sh.j2",
        notebook=notebook,
        token_file=TOKEN_FILE,
        container_port=CONTAINER_PORT,
        tensorboard_port=TENSORBOARD_CONTAINER_PORT,
    )
    return {
        "envkit/runtime/notebook.sh": script,
        "envkit/runtime/notebook.json": _json_file(settings),
    }


def _locked_files(locked: LockedPlan) -> dict[str, str]:
    files = {"envkit/runtime/envkit.lock": locked.lock_text}
    if locked.pip:
        files["envkit/lock/pip-requirements.txt"] = "".join(f"{line}\n" for line in locked.pip)
    if locked.conda_explicit:
        files["envkit/lock/conda-explicit.txt"] = "@EXPLICIT\n" + "".join(
            f"{line}\n" for line in locked.conda_explicit
        )
    return files


def _project_files(plan: Plan) -> dict[str, str]:
    """The project's own files the build reads, as they are, under envkit/project/."""
    copied = [f for layer in plan.packages.requirements for f in layer.files]
    project = plan.packages.project
    if project is not None and project.lock is not None:  # uv export reads both
        copied += [project.pyproject, project.lock, *project.members]
    return {f"envkit/project/{f.path}": f.text for f in copied}


ACTIVITY = "envkit/runtime/activity.py"
CONDA_TOOL = "envkit/conda/conda_tool.py"
# Programs the build context carries exactly as the package has them (checked Python, not
# templates; no golden copies): context path -> the package's file.
SHIPPED = {
    ACTIVITY: "runtime/activity.py",
    CONDA_TOOL: "runtime/conda_tool.py",
    **{f"envkit/programs/{name}": f"runtime/{name}" for name in BUILD_PROGRAMS},
}


def _conda_files(plan: Plan, render: Callable[..., str]) -> dict[str, str]:
    """envkit-conda where the rattler bootstrap makes the environment; the project's conda
    lock where one is installed (a --locked build installs envkit.lock's instead)."""
    files = {}
    if plan.conda.bootstrap == "rattler":  # envkit-conda, its wrapper, its pinned requirements
        files[CONDA_TOOL] = shipped_text(CONDA_TOOL)
        files["envkit/conda/requirements.txt"] = rattler_requirements()
        files["envkit/conda/envkit-conda"] = render(
            "conda/envkit-conda.sh.j2", venv=RATTLER_VENV, tool_dir=CONDA_TOOL_DIR
        )
    if plan.conda.lock is not None and plan.locked is None:
        files.update(_conda_lock_files(plan.conda.lock, plan.conda.bootstrap == "rattler"))
    if plan.conda.pip_after_torch and plan.locked is None:
        files[CONDA_PIP] = "".join(f"{line}\n" for line in plan.conda.pip)
    return files


def _conda_lock_files(lock: CondaLockPackages, rattler: bool) -> dict[str, str]:
    """The project's conda lock as the build installs it: an explicit list (URL#checksum: the
    sha256 for envkit-conda, the md5 conda's explicit format reads for Miniforge's conda) and,
    where it has PyPI packages, a hashed requirements file."""
    lines = [
        f"{url}#{(sha256 or md5) if rattler else (md5 or 'sha256:' + sha256)}\n"
        for url, sha256, md5 in lock.conda
    ]
    files = {
        PROJECT_CONDA_EXPLICIT: f"# From {lock.source}, {lock.platform}.\n@EXPLICIT\n"
        + "".join(lines)
    }
    hashed = [f"{name}{pin} --hash=sha256:{digest}\n" for name, pin, digest in lock.pypi if digest]
    if hashed:
        files[PROJECT_CONDA_PYPI] = "".join(hashed)
    if lock.unhashed:  # git packages pinned by commit, files the index served no sum for
        files[PROJECT_CONDA_UNHASHED] = "".join(f"{line}\n" for line in lock.unhashed)
    return files


def shipped_text(context_path: str) -> str:
    return (PACKAGE / SHIPPED[context_path]).read_text(encoding="utf-8")


def _ssh_and_apt_files(plan: Plan, render: Callable[..., str]) -> dict[str, str]:
    """sshd's settings (where SSH is on), and each apt family's sources for the mirror."""
    files = {}
    if plan.ssh.enabled:
        files["envkit/runtime/sshd_config"] = render("sshd_config.j2", ssh=plan.ssh)
        files["envkit/runtime/sshd-tune.sh"] = render(
            "sshd-tune.sh.j2", kex=plan.ssh.kex, post_quantum_only=plan.ssh.kex == "post-quantum"
        )
    title = plan.apt.mirror_title
    for family in plan.apt.families:  # sources.list, and deb822 .sources
        for suffix, template in (("list", "sources.list.j2"), ("sources", "sources.deb822.j2")):
            files[f"envkit/apt/{family.name}.{suffix}"] = render(
                f"apt/{template}", family=family, title=title
            )
    return files


def render_files(plan: Plan, to_project: Path = Path("..")) -> dict[str, str]:
    """Every output file's relative path and text. Pure: writes nothing. TO_PROJECT is
    envkit.yaml's folder seen from the build context: compose reads relative paths from its
    own folder, and the project's are envkit.yaml's."""
    env = make_environment()
    common = {"version": __version__, "ssh_enabled": plan.ssh.enabled}
    ca_bundle = SYSTEM_BUNDLE if plan.ca_certs else None

    def render(name: str, **extra: object) -> str:
        return env.get_template(name).render(**common, **extra)

    files = {
        # The same template twice: BuildKit's (cache mounts) and the classic builder's.
        DOCKERFILE: render("Dockerfile.j2", layers=dockerfile_layers(plan, True)),
        CLASSIC_DOCKERFILE: render("Dockerfile.j2", layers=dockerfile_layers(plan, False)),
        "docker-compose.yml": render(
            "docker-compose.yml.j2", model=containers_model(plan, to_project.as_posix())
        ),
        "environment.yml": render(
            "environment.yml.j2",
            conda=plan.conda,
            python=plan.python,
            notes=_environment_notes(plan),
        ),
        ".dockerignore": render("dockerignore.j2"),
        "envkit/pip.conf": render("pip.conf.j2", pip=plan.pip, ca_bundle=ca_bundle),
        "envkit/condarc": render("condarc.j2", rc=plan.conda.rc, ca_bundle=ca_bundle),
        "envkit/runtime/entrypoint.sh": render(
            "entrypoint.sh.j2", notebook=plan.notebook, editable=plan.editable
        ),
        "envkit/runtime/healthcheck.sh": render("healthcheck.sh.j2"),
        ACTIVITY: shipped_text(ACTIVITY),
        # The programs the build runs, as the package has them (envkit/runtime/).
        **{f"envkit/programs/{n}": shipped_text(f"envkit/programs/{n}") for n in BUILD_PROGRAMS},
        # Where the activity watch looks, as data beside it.
        "envkit/runtime/activity.json": _json_file(
            {"state_file": ACTIVITY_FILE, "token_file": TOKEN_FILE, "notebook_port": CONTAINER_PORT}
        ),
        "envkit/runtime/install-keys.sh": render("install-keys.sh.j2"),
        "envkit/apt/apt-mirror.sh": render("apt/apt-mirror.sh.j2", apt=plan.apt),
        "envkit/apt/cuda-repo.sh": render("apt/cuda-repo.sh.j2"),
    }
    files.update(_project_files(plan))
    files.update(_conda_files(plan, render))
    files.update(_ssh_and_apt_files(plan, render))
    if plan.locked is not None:
        files.update(_locked_files(plan.locked))
    if plan.notebook.enabled:
        files.update(_notebook_files(plan.notebook, render))
    for cert in plan.ca_certs:
        files[f"envkit/ca/{cert.name}"] = cert.pem
    for service in plan.services:
        files[f"{service.keys_dir}/authorized_keys"] = "".join(f"{key}\n" for key in service.keys)
    return files
