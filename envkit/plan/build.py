"""make_plan: every decision between a validated Spec and the rendered files (the plan's types
are in plan/models/plan.py; the Python environment's decisions in plan/image/environment.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from envkit.catalog.compat import CudaRelease, TorchRelease
from envkit.catalog.mirrors import load_presets
from envkit.config.load import LoadedSpec, Loc
from envkit.config.model import Spec
from envkit.config.python_section import PythonSection
from envkit.errors import FieldError
from envkit.plan.box.access import plan_services
from envkit.plan.box.notebook import plan_notebook
from envkit.plan.box.ssh import plan_ssh
from envkit.plan.image import torch as torch_decisions
from envkit.plan.image.certs import SYSTEM_BUNDLE, plan_ca_certs
from envkit.plan.image.conda_bootstrap import conda_bootstrap_notes
from envkit.plan.image.environment import plan_conda, plan_packages, plan_python
from envkit.plan.image.install import plan_install
from envkit.plan.image.mirrors import plan_apt, plan_pip
from envkit.plan.models.plan import (
    BuildStepPlan,
    HostFacts,
    ImagePlan,
    PackagesPlan,
    Plan,
    PythonPlan,
    RuntimePlan,
    SlurmPlan,
    VerifyPlan,
    WorkspacePlan,
)
from envkit.plan.project.editable_backend import editable_backend
from envkit.plan.project.inline_pip import inline_companions
from envkit.plan.project.project_files import read_project_files
from envkit.plan.project.pyproject import PythonProject, read_python_project
from envkit.plan.project.torch_lines import TorchContext


def _notes(loaded: LoadedSpec, torch: TorchRelease | None) -> list[str]:
    spec, notes = loaded.spec, []
    if ("base", "flavor") not in loaded.lines and spec.base.flavor == "cuda":
        notes.append(
            "base.flavor: cuda, which torch: none or an arm64 platform needs (pytorch/pytorch "
            "images carry torch and are x86 only); set base.flavor to choose another"
        )
    if not load_presets()[spec.mirrors.preset].documented:
        notes.append(
            f"mirror preset {spec.mirrors.preset}: its paths rest on third-party configs, "
            "not on the mirror's own help page"
        )
    if torch is not None and not torch.confirmed:
        notes.append(f"torch {torch.version}'s row in the compatibility table is not yet confirmed")
    return notes


def _torch_context(
    plan: torch_decisions.TorchPlan, cuda: CudaRelease | None, python: PythonPlan
) -> TorchContext:
    """What a project's own torch lines are judged against (plan/project/torch_lines.py)."""
    build = plan.cuda
    wheel = None if build is None else ("cpu" if build == "cpu" else cuda.wheel if cuda else None)
    return TorchContext(plan.version, build, wheel, none=plan.none, python=python.version)


def _signing_key(loaded: LoadedSpec) -> str | None:
    """signing.verify as a path from envkit.yaml's folder; a key that is not there is refused
    here, before anything is pulled or run."""
    raw = loaded.spec.signing.verify
    if raw is None:
        return None
    path = loaded.user_path(raw)
    if not path.is_file():
        problem = FieldError(
            f"the public key {raw} is not there",
            "commit the team's cosign.pub (from `cosign generate-key-pair`) beside envkit.yaml",
        )
        raise loaded.error(("signing", "verify"), problem, raw)
    return str(path)


def make_plan(loaded: LoadedSpec, host: HostFacts | None = None) -> Plan:
    spec = loaded.spec
    host = host or HostFacts.current()
    torch, cuda = torch_decisions.resolve_torch(loaded)
    base_image = torch_decisions.base_image(loaded, torch, cuda)
    python = plan_python(loaded, torch)
    torch_plan = torch_decisions.torch_plan(loaded, torch, cuda)
    context = _torch_context(torch_plan, cuda, python)
    files = read_project_files(loaded, context)
    project = read_python_project(loaded, context)
    editable = (*files.editable, *_members(loaded, project))  # folders installed at first start
    inline, moved, inline_notes = inline_companions(loaded, context)
    asked = (*files.companions, *(project.companions if project else ()), *inline)
    torch_plan, carried = torch_decisions.with_companions(torch_plan, asked, inline)
    conda = plan_conda(loaded, python, files, torch_plan)
    torch_plan, lock_notes = torch_decisions.torch_from_conda_lock(loaded, torch_plan, conda.lock)
    apt = plan_apt(spec.mirrors)
    notes = [*_notes(loaded, torch), *files.notes, *(project.notes if project else ())]
    notes += [*inline_notes, *carried, *lock_notes]
    notes += conda_bootstrap_notes(spec.mirrors.preset, conda.bootstrap, conda.rc.routed)
    pip = plan_pip(spec.mirrors)
    ca_certs = plan_ca_certs(loaded)
    ca_bundle = SYSTEM_BUNDLE if ca_certs else None
    ssh, ssh_notes = plan_ssh(spec, host.ipv6)
    packages = plan_packages(loaded, python, conda, files, project, moved)
    return Plan(
        project=spec.name,
        image=ImagePlan(
            tag=f"envkit/{spec.name}:latest",
            flavor=spec.base.flavor,
            base=base_image,
            variant=spec.base.variant,
            labels=(("io.envkit.project", spec.name),),
        ),
        cuda=cuda,
        torch=torch_plan,
        python=python,
        conda=conda,
        apt=apt,
        pip=pip,
        packages=_with_backend(loaded, packages, editable),
        ca_certs=ca_certs,
        ssh=ssh,
        runtime=_runtime_plan(spec),
        services=plan_services(loaded, host.uid, host.gid),
        verify=_verify_plan(loaded),
        slurm=_slurm_plan(loaded),
        notebook=plan_notebook(loaded.spec),
        install=plan_install(spec.build, python.bin_dir, pip, base_image, ca_bundle),
        notes=(*notes, *ssh_notes),
        members=tuple(m.name for m in spec.team.members),
        registry=spec.registry,
        steps=_steps(spec, host),
        workspace=_workspace(loaded),
        editable=tuple(dict.fromkeys(p for _, p in _editable_folders(loaded, editable))),
        project_dir=str(loaded.path.parent.resolve()),
        platforms=tuple(spec.platforms or ()),
        signing_key=_signing_key(loaded),
    )


def _workspace(loaded: LoadedSpec) -> WorkspacePlan | None:
    """The project folder at workspace.target, unless runtime.volumes mounts something there
    itself (an earlier config's own workspace volume keeps working as it did)."""
    workspace = loaded.spec.workspace
    taken = [volume.split(":")[1] for volume in loaded.spec.runtime.volumes]
    if not workspace.enabled or workspace.target in taken:
        return None
    if workspace.path.startswith("/"):
        return WorkspacePlan(workspace.path, workspace.target, None)
    folder = (loaded.path.parent / workspace.path).resolve()
    within = str(Path(workspace.path))  # "code/", "./code" and "code" alike
    return WorkspacePlan(str(folder), workspace.target, within)


def _members(loaded: LoadedSpec, project: PythonProject | None) -> tuple[str, ...]:
    """The lock's packages from the project's own folders, and a uv workspace's members'
    with the project itself (python.install: editable): installed editable at first start,
    as `uv sync` has them."""
    section = loaded.spec.python
    if project is None:
        return ()
    prefix = "" if project.folder == "." else f"{project.folder}/"
    local = tuple(prefix + folder for _, folder in project.local)  # path sources: always, as -e
    if not isinstance(section, PythonSection) or section.install != "editable":
        return local
    return (*local, *(prefix + folder for folder in project.installed if folder != "."))


def _editable_folders(loaded: LoadedSpec, from_files: tuple[str, ...]) -> list[tuple[str, str]]:
    """(folder relative to envkit.yaml's, path in the container) of each project folder
    installed editable at first start: the `-e .` lines of the project's files and
    python.project with install: editable, where the mounted workspace holds them (an image has
    nothing to edit)."""
    workspace = _workspace(loaded)
    if workspace is None or workspace.within_project is None:
        return []
    folders = list(from_files)
    section = loaded.spec.python
    if isinstance(section, PythonSection) and section.project and section.install == "editable":
        folders.append(section.project)
    mounted = Path(workspace.within_project)
    found = []
    for folder in folders:
        inside = Path(folder)
        if inside == mounted or mounted in inside.parents or str(mounted) == ".":
            relative = inside.relative_to(mounted) if str(mounted) != "." else inside
            path = (Path(workspace.target) / relative).as_posix().rstrip("/")
            found.append((folder, path.replace("/./", "/").removesuffix("/.")))
    return found


def _with_backend(
    loaded: LoadedSpec, packages: PackagesPlan, from_files: tuple[str, ...]
) -> PackagesPlan:
    """PACKAGES with the build backend of every folder installed editable at first start."""
    folders = tuple(dict.fromkeys(folder for folder, _ in _editable_folders(loaded, from_files)))
    if not folders:
        return packages
    spec = loaded.spec
    if isinstance(spec.python, PythonSection) and spec.python.install == "editable":
        loc: Loc = ("python", "project")
    elif spec.conda is not None and spec.conda.file:
        loc = ("conda", "file")
    else:
        loc = ("packages", "requirements")
    return replace(packages, build_backend=editable_backend(loaded, folders, loc))


def _steps(spec: Spec, host: HostFacts) -> tuple[BuildStepPlan, ...]:
    login = (spec.ssh.uid or host.uid, spec.ssh.gid or host.gid)
    return tuple(
        BuildStepPlan(step.run, step.after, None if step.user == "root" else login)
        for step in spec.build.steps
    )


def _runtime_plan(spec: Spec) -> RuntimePlan:
    runtime, idle_stop = spec.runtime, spec.team.idle_stop
    return RuntimePlan(
        gpus=runtime.gpus,
        shm_size=None if runtime.ipc_host else runtime.shm_size,
        ipc_host=runtime.ipc_host,
        volumes=runtime.volumes,
        env=tuple(sorted(runtime.env.items())),
        # With idle_stop, an idle container ends its own sshd (exit 0): on-failure leaves it
        # stopped and still restarts a crash; always/unless-stopped are refused by the rules.
        restart="on-failure"
        if idle_stop is not None and "restart" not in runtime.model_fields_set
        else runtime.restart,
        ports=runtime.ports,
        build_network=runtime.build_network,
        idle_stop_s=None if idle_stop is None else int(idle_stop),
        shared_cache=runtime.shared_cache,
    )


def _slurm_plan(loaded: LoadedSpec) -> SlurmPlan:
    slurm = loaded.spec.slurm
    workdir = Path(slurm.workdir).expanduser() if slurm.workdir else Path(".envkit/slurm")
    resolved = str((loaded.path.parent / workdir).resolve())
    return SlurmPlan(**slurm.model_dump(exclude={"workdir"}), workdir=resolved)


def _verify_plan(loaded: LoadedSpec) -> VerifyPlan:
    spec = loaded.spec
    checks_dir = spec.verify.checks_dir
    require_gpu = spec.verify.require_gpu
    if require_gpu is None:  # whether the box asks for GPUs at all
        require_gpu = spec.runtime.gpus != "none" and spec.cuda != "cpu"
    return VerifyPlan(
        require_gpu=require_gpu,
        expected_gpus=spec.verify.expected_gpus,
        min_shm=spec.verify.min_shm,
        regressions=spec.verify.regressions,
        thresholds=tuple(sorted(spec.verify.thresholds.items())),
        gpu=spec.verify.gpu.given(),
        checks_dir=str((loaded.path.parent / checks_dir).resolve()) if checks_dir else None,
    )
