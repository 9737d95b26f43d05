"""The image's layers decided: `dockerfile_model(plan, buildkit)` turns the plan into the typed
record Dockerfile.j2 lays out (plan/dockerfile.py), once for BuildKit (cache mounts, downloads
kept across builds) and once for the classic builder (no mounts, clean-up in the same layer)."""

from __future__ import annotations

from envkit.plan.conda_layers import conda_env_step, rattler_step
from envkit.plan.dockerfile import (
    BackendStep,
    BuildStep,
    CondaStep,
    DockerfileModel,
    Header,
    LockedPipStep,
    MiniforgeStep,
    NotebookStep,
    OwnPipStep,
    ProjectLockStep,
    ProjectStep,
    PythonStep,
    RequirementsStep,
    RuntimeStep,
    SystemStep,
    TorchStep,
)
from envkit.plan.layer_kit import TORCH_CONSTRAINTS, WITHOUT_CONSTRAINTS, Layers
from envkit.plan.model import Plan

# The check that the installed torch is the release and build envkit chose, run in the image.
# PyPI's aarch64 torch is a CPU build: where a GPU box on Grace got one, the check says why.
TORCH_CHECK = (
    'import sys, platform, torch; v, c = sys.argv[1:]; got = torch.version.cuda or "cpu"; '
    'ok = torch.__version__.split("+")[0] == v and (got == c or got.startswith(c + ".")); '
    'arm = got == "cpu" != c and platform.machine() == "aarch64"; '
    'why = " (PyPI\'s aarch64 torch is a CPU build; CUDA ones are on the PyTorch index)"; '
    'sys.exit(0 if ok else "torch %s (CUDA %s) is installed, not torch %s (CUDA %s)%s" '
    '% (torch.__version__, got, v, c, why if arm else ""))'
)
LOCKED_PIP = "/opt/envkit/lock/pip-requirements.txt"
CONTEXT_PROJECT = "envkit/project/"  # the project's files in the build context
IMAGE_PROJECT = "/opt/envkit/project/"  # and in the image


def _header(plan: Plan) -> Header:
    summary: str = plan.image.flavor
    if plan.torch.version:
        summary += f", torch {plan.torch.version}"
    if plan.cuda:
        summary += f", CUDA {plan.cuda.version}"
    return Header(
        summary=summary,
        base=plan.locked.base if plan.locked else plan.image.base,
        locked=plan.locked is not None,
        env=plan.python.env,
        ca_bundle="/etc/ssl/certs/ca-certificates.crt" if plan.ca_certs else None,
        labels=plan.image.labels,
        expose_ssh=plan.ssh.enabled,
    )


def _steps(plan: Plan, after: str) -> tuple[BuildStep, ...]:
    return tuple(
        BuildStep(index, step.after, step.run, step.user)
        for index, step in enumerate(plan.steps)
        if step.after == after
    )


def _python(layers: Layers) -> tuple[MiniforgeStep | None, PythonStep | None, PythonStep | None]:
    """(Miniforge, a venv, the base's own Python): at most one of them, and none where the
    rattler bootstrap makes the conda environment."""
    plan, install = layers.plan, layers.install
    if plan.conda.bootstrap == "rattler":
        return None, None, None
    if plan.conda.bootstrap == "miniforge":
        uv = layers.uv("/opt/conda/bin/python")
        mounts = (install.downloads, *((install.pip_cache,) if uv else ()))
        installer = (
            f"{install.downloads.target}/miniforge-$sum.sh"
            if layers.buildkit
            else "/tmp/miniforge.sh"  # noqa: S108 - a path in the image's build, removed after
        )
        sums = plan.conda.installer_sha256
        miniforge = MiniforgeStep(
            layers.mounts(*mounts),
            sums,
            sums[0][0] != "*",
            installer,
            plan.conda.installer_url,
            layers.buildkit,
            uv,
        )
        return miniforge, None, None
    if plan.python.provider == "venv":
        uv = layers.uv("/opt/venv/bin/python")
        return None, PythonStep(layers.mounts(install.pip_cache) if uv else (), uv), None
    uv = layers.uv("python")
    if uv is None:
        return None, None, None
    return None, None, PythonStep(layers.mounts(install.pip_cache), uv)


def _locked_pip(layers: Layers) -> LockedPipStep | None:
    plan = layers.plan
    locked = plan.locked
    if locked is None or not locked.pip:
        return None
    packages = plan.packages
    mounts = (layers.install.cache, *((packages.netrc,) if packages.private_indexes else ()))
    torch_index = plan.torch.index_url if not plan.torch.preinstalled else None
    command = [*layers.command, "--no-deps"]
    if locked.pip_hashed:
        command = [*WITHOUT_CONSTRAINTS, *command, "--require-hashes"]
    command += layers.install.indexes(torch_index)
    for url in packages.private_indexes:
        command += ["--extra-index-url", url]
    return LockedPipStep(locked.pip_hashed, layers.mounts(*mounts), tuple(command))


def _torch_comment(plan: Plan) -> tuple[str, ...]:
    torch = plan.torch
    if plan.locked and not torch.preinstalled:
        return (
            f"6. torch {torch.version} came from the lock's pip packages above: checked to be "
            f"the CUDA {torch.cuda} build,",
        )
    if torch.preinstalled:
        where = "the conda lock's environment" if torch.source == "conda-lock" else "the base image"
        checked = f"checked to be the CUDA {torch.cuda} build,"
        return (f"6. torch {torch.version} came with {where}: {checked}",)
    if torch.source == "pypi":
        return (
            f"6. torch {torch.version} from the pip index (the mirror): PyPI's own torch wheel "
            "for this",
            f"   release is the CUDA {torch.cuda} build, so the mirror preset's PyPI serves it. "
            "Checked,",
        )
    return (
        f"6. torch {torch.version} from the PyTorch {torch.cuda} wheel index only, so a mirror's",
        "   +cpu wheel cannot win. Checked to be that build,",
    )


def _torch(layers: Layers) -> TorchStep | None:
    plan = layers.plan
    torch = plan.torch
    if torch.none:
        return None
    if not torch.version:  # the base image's own torch (apt's, a custom image's): kept as it is
        constrain: tuple[str, ...] = ("python", "-c", TORCH_CONSTRAINTS)
        comment = ("6. the base image's own torch, if it has one, kept as it is:",)
        return TorchStep(comment, (), None, None, "torch", constrain)
    install = None
    mounts: tuple[str, ...] = ()
    if not torch.preinstalled and not plan.locked:
        mounts = layers.cache
        indexes = layers.install.indexes(torch.index_url, only=True)
        install = (*layers.command, *indexes, torch.requirement, *torch.companions)
    check = ("python", "-c", TORCH_CHECK, torch.version, str(torch.cuda))
    constrain = ("python", "-c", TORCH_CONSTRAINTS, torch.requirement, *torch.companions)
    return TorchStep(_torch_comment(plan), mounts, install, check, torch.requirement, constrain)


def _requirements(layers: Layers) -> tuple[RequirementsStep, ...]:
    command = (*layers.command, *layers.install.indexes())
    return tuple(
        RequirementsStep(
            top=layer.top,
            includes=len(layer.files) > 1,
            copies=tuple((CONTEXT_PROJECT + f.path, IMAGE_PROJECT + f.path) for f in layer.files),
            mounts=layers.cache,
            command=(*command, "-r", IMAGE_PROJECT + layer.top),
        )
        for layer in layers.plan.packages.requirements
    )


def _project(layers: Layers) -> tuple[ProjectLockStep | None, ProjectStep | None]:
    project = layers.plan.packages.project
    if project is None:
        return None, None
    if project.lock is not None:
        install = (
            *WITHOUT_CONSTRAINTS,
            *layers.command,
            "--no-deps",
            "--require-hashes",
            *layers.install.indexes(),
        )
        step = ProjectLockStep(
            locked=project.locked,
            not_from_lock=", ".join(project.not_from_lock),
            copies=(
                CONTEXT_PROJECT + project.pyproject.path,
                CONTEXT_PROJECT + project.lock.path,
                project.target + "/",
            ),
            mounts=layers.cache,
            target=project.target,
            export=(layers.install.uv, "export", *project.export_args),
            command=install,
        )
        return step, None
    if not project.requirements:
        return None, None
    pip = layers.pip_step(project.requirements)
    return None, ProjectStep(project.pyproject.path, ", ".join(project.extras), pip)


def _own_pip(layers: Layers) -> tuple[OwnPipStep, ...]:
    packages = layers.plan.packages
    steps = []
    for package in packages.pip_own:
        mounts = (layers.install.cache, *((packages.netrc,) if package.index else ()))
        command = [*layers.command]
        if package.no_build_isolation:
            command.append("--no-build-isolation")
        command += layers.install.indexes()
        if package.index:
            command += ["--extra-index-url", package.index]
        steps.append(
            OwnPipStep(
                requirement=package.requirement,
                no_build_isolation=package.no_build_isolation,
                index=package.index,
                index_first=layers.install.uses_uv,
                mounts=layers.mounts(*mounts),
                command=(*command, "--", package.requirement),
            )
        )
    return tuple(steps)


def _notebook(layers: Layers) -> NotebookStep | None:
    plan = layers.plan
    notebook = plan.notebook
    if not notebook.enabled:
        return None
    locked = plan.locked is not None
    install = None
    if not locked:
        install = (*layers.command, *layers.install.indexes(), "--", *notebook.requirements)
    return NotebookStep(
        tensorboard=notebook.tensorboard,
        from_mirror=not locked,
        kernel=notebook.kernel,
        display_name=notebook.display_name,
        mounts=() if locked else layers.cache,
        install=install,
    )


# The requirements (arguments) whose project the environment does not have, by name: a build
# backend layer adds tools, never moves what the layers before it installed.
MISSING = (
    "import sys, re, importlib.metadata as m; "
    'k = lambda s: re.sub(r"[-_.]+", "-", s).lower(); '
    'h = {k(d.metadata["Name"] or "") for d in m.distributions()}; '
    'print(chr(10).join(r for r in sys.argv[1:] if k(re.split(r"[ ;<>=!~\\[(@]", r, '
    "maxsplit=1)[0]) not in h))"
)


def _backend(layers: Layers) -> BackendStep:
    requirements = layers.plan.packages.build_backend
    step = layers.pip_step(requirements)
    return BackendStep(step.mounts, ("python", "-c", MISSING, *requirements), step.command)


def dockerfile_model(plan: Plan, buildkit: bool) -> DockerfileModel:
    """The image's layers for one builder, as data."""
    layers = Layers(plan, buildkit)
    locked = plan.locked
    packages = plan.packages
    miniforge, venv, base_python = _python(layers)
    rattler = rattler_step(layers)
    conda = CondaStep(plan.conda.rc.path, conda_env_step(layers)) if plan.conda.in_image else None
    project_lock, project = _project(layers) if not locked else (None, None)
    return DockerfileModel(
        header=_header(plan),
        system=SystemStep(
            layers.apt(locked.apt if locked else packages.apt_system), bool(plan.ca_certs)
        ),
        steps_after_system=_steps(plan, "system"),
        miniforge=miniforge,
        rattler=rattler,
        venv=venv,
        base_python=base_python,
        conda=conda,
        locked_pip=_locked_pip(layers),
        torch=_torch(layers),
        runtime=RuntimeStep(plan.notebook.enabled, locked is not None, plan.ssh.enabled),
        user_apt=layers.apt(packages.apt_user) if packages.apt_user and not locked else None,
        pip=layers.pip_step(packages.pip) if packages.pip and not locked else None,
        requirements=() if locked else _requirements(layers),
        project_lock=project_lock,
        project=project,
        editable_backend=_backend(layers) if packages.build_backend and not locked else None,
        own_pip=() if locked else _own_pip(layers),
        notebook=_notebook(layers),
        steps_after_python=_steps(plan, "python"),
    )
