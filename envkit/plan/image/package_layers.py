"""The image's Python package layers: a locked build's pip packages, torch (then pinned for
every later install), your pip packages, requirements files, the project's dependencies (its
uv.lock exactly, or its pyproject.toml's), the editable project's build backend, and the
packages.pip entries with options of their own, a layer each."""

from __future__ import annotations

import shlex

from envkit.plan.image.dockerfile import (
    CONSTRAINT_VARIABLES,
    CONSTRAINTS,
    WITHOUT_CONSTRAINTS,
    Kit,
    Layer,
    exec_form,
    hadolint,
    lines,
    run,
    words,
)
from envkit.plan.project.manager_locks import export_command
from envkit.plan.project.pyproject import PythonProject
from envkit.runtime import copy_programs, in_image

LOCKED_PIP = "/opt/envkit/lock/pip-requirements.txt"
CONTEXT_PROJECT = "envkit/project/"  # the project's files in the build context
IMAGE_PROJECT = "/opt/envkit/project/"  # and in the image
PINNED = """\
   then pinned: PIP_CONSTRAINT and UV_CONSTRAINT make every later install (yours, the team's,
   pip's or uv's) keep this torch and what it was built against (its CUDA libraries, triton,
   numpy's major where numpy came with it), so a package that wants another one fails the
   build at its layer, naming both, instead of swapping it; a source package whose build
   needs torch (UV_BUILD_CONSTRAINT, and pip's own) builds against this torch's release."""
# Each layer's versions are the config's or the project's (DL3013), and its own layer (DL3059).
OWN = "DL3013,DL3059"


def locked_pip_layer(kit: Kit) -> Layer | None:
    plan = kit.plan
    locked = plan.locked
    if locked is None or not locked.pip:
        return None
    packages = plan.packages
    mounts = kit.mounts(kit.install.cache, *((packages.netrc,) if packages.private_indexes else ()))
    command = (*kit.command, "--no-deps")
    if locked.pip_hashed:
        command = (*WITHOUT_CONSTRAINTS, *command, "--require-hashes")
    command += kit.install.indexes(plan.torch.index_url if not plan.torch.preinstalled else None)
    for url in packages.private_indexes:
        command += ("--extra-index-url", url)
    for url in packages.find_links:
        command += ("--find-links", url)
    hashed = ", each file checked against the lock's sha256" if locked.pip_hashed else ""
    comments = (
        f"6. Every pip package at its locked version{hashed}",
        "   (--no-deps: the lock lists the whole set, dependencies included).",
    )
    install = hadolint("DL3059", run(mounts, f"{words(command)} \\\n      -r {LOCKED_PIP}"))
    return Layer(comments, (f"COPY envkit/lock/pip-requirements.txt {LOCKED_PIP}", install))


def _torch_comment(kit: Kit) -> tuple[str, ...]:
    torch = kit.plan.torch
    checked = f"checked to be the CUDA {torch.cuda} build,"
    if kit.locked and not torch.preinstalled:
        return (f"6. torch {torch.version} came from the lock's pip packages above: {checked}",)
    if torch.preinstalled:
        where = "the conda lock's environment" if torch.source == "conda-lock" else "the base image"
        return (f"6. torch {torch.version} came with {where}: {checked}",)
    if torch.source == "pypi":
        return lines(f"""\
6. torch {torch.version} from the pip index (the mirror): PyPI's own torch wheel for this
   release is the CUDA {torch.cuda} build, so the mirror preset's PyPI serves it. Checked,""")
    return lines(f"""\
6. torch {torch.version} from the PyTorch {torch.cuda} wheel index only, so a mirror's
   +cpu wheel cannot win. Checked to be that build,""")


def torch_layer(kit: Kit) -> Layer | None:
    """torch installed (or found) and checked, then pinned for every later install."""
    torch = kit.plan.torch
    if torch.none:
        return None
    commands: tuple[str, ...] = ()
    mounts: tuple[str, ...] = ()
    if not torch.version:  # the base image's own torch (apt's, a custom image's): kept as it is
        comments: tuple[str, ...] = (
            "6. the base image's own torch, if it has one, kept as it is:",
        )
        constrain: tuple[str, ...] = ("python", in_image("torch_needs.py"))
    else:
        comments = _torch_comment(kit)
        if not torch.preinstalled and not kit.locked:
            mounts = kit.cache
            indexes = kit.install.indexes(torch.index_url, only=True)
            commands = (words((*kit.command, *indexes, torch.requirement, *torch.companions)),)
        check = ("python", in_image("torch_check.py"), torch.version, str(torch.cuda))
        commands += (words(check),)
        constrain = ("python", in_image("torch_needs.py"), torch.requirement, *torch.companions)
    commands += (f"mkdir -p /etc/envkit && {words(constrain)} > {CONSTRAINTS}",)
    pin = "ENV " + " \\\n    ".join(f"{name}={CONSTRAINTS}" for name in CONSTRAINT_VARIABLES)
    programs = copy_programs("torch_check.py", "torch_needs.py")
    install = hadolint("DL3059", run(mounts, *commands))
    return Layer((*comments, *lines(PINNED)), (programs, install, pin))


def pip_layer(kit: Kit) -> Layer | None:
    pip = kit.plan.packages.pip
    if not pip or kit.locked:
        return None
    comment = "9. Your pip packages, from the mirror. Pin them in envkit.yaml to pin them here."
    return Layer((comment,), (hadolint(OWN, kit.pip(pip)),))


def requirements_layers(kit: Kit) -> tuple[Layer, ...]:
    if kit.locked:
        return ()
    command = (*kit.command, *kit.install.indexes())
    layers = []
    for layer in kit.plan.packages.requirements:
        includes = ", with the files it includes" if len(layer.files) > 1 else ""
        comments = (
            f"9. {layer.top} (packages.requirements) as the project has it{includes}:",
            "   copied alone, so a change to it rebuilds only this layer.",
        )
        copies = tuple(
            exec_form("COPY", (CONTEXT_PROJECT + f.path, IMAGE_PROJECT + f.path))
            for f in layer.files
        )
        install = run(kit.cache, words((*command, "-r", IMAGE_PROJECT + layer.top)))
        layers.append(Layer(comments, (*copies, hadolint(OWN, install))))
    return tuple(layers)


def project_layer(kit: Kit) -> Layer | None:
    """The project's dependencies (python.project): its uv.lock exactly, else its
    pyproject.toml's requirements."""
    project = kit.plan.packages.project
    if project is None or kit.locked:
        return None
    if project.lock is None:
        if not project.requirements:
            return None
        extras = f", extras {', '.join(project.extras)}" if project.extras else ""
        sources = ", from its own package sources too" if project.sources else ""
        comment = (
            f"9. The project's dependencies from {project.pyproject.path}{sources} "
            f"(python.project{extras}; no uv.lock)."
        )
        return Layer((comment,), (hadolint(OWN, kit.pip(project.requirements, project.sources)),))
    elsewhere = "."
    if project.not_from_lock:
        elsewhere = "; torch and what only torch needs come from\n   envkit's own torch layer: "
        elsewhere += f"{', '.join(project.not_from_lock)}."
    lock = project.lock.path.rsplit("/", 1)[-1]
    comments = lines(f"""\
9. The project's {lock}, exactly (python.project), exported by {EXPORTED_BY[lock]}
   as hashed requirement lines (nothing resolved again); installed with --no-deps, every file
   checked against its sha256. {project.locked} packages{elsewhere}""")
    copies = (project.pyproject.path, project.lock.path)
    copy = [exec_form("COPY", (*(CONTEXT_PROJECT + c for c in copies), project.target + "/"))]
    for member in project.members:  # a workspace: where uv looks for each member's file
        folder = IMAGE_PROJECT + member.path.rsplit("/", 1)[0] + "/"
        copy.append(exec_form("COPY", (CONTEXT_PROJECT + member.path, folder)))
    if lock == "uv.lock":
        export: tuple[str, ...] = (
            f"{words((kit.install.uv, 'export', *project.export_args))} -o {LOCKED}",
        )
    else:
        copy.insert(0, copy_programs("drop_requirements.py"))
        export = _exported_by_manager(kit, project)
    install = (*WITHOUT_CONSTRAINTS, *kit.command, "--no-deps")
    indexes = kit.install.indexes(sources=project.sources)
    commands = (
        f"cd {shlex.quote(project.target)}",
        *export,
        f"{words((*install, '--require-hashes', *indexes))} -r {LOCKED}",
        f"rm {LOCKED}",
        # the lock's git packages: each at the commit it resolved (git has no sha256 to check)
        *([words((*install, *indexes, *project.git))] if project.git else []),
    )
    return Layer(comments, (*copy, hadolint(OWN, run(kit.cache, *commands))))


EXPORTED_BY = {
    "uv.lock": "`uv export --frozen`",
    "poetry.lock": "Poetry (`poetry export`)",
    "pdm.lock": "PDM (`pdm export`)",
}
LOCKED = "/tmp/envkit-lock.txt"  # noqa: S108 - a path in the image's build, removed after
EXPORTED = "/tmp/envkit-export.txt"  # noqa: S108 - the same


def _exported_by_manager(kit: Kit, project: PythonProject) -> tuple[str, ...]:
    """Poetry's or PDM's exporter, run by the image's uv (fetched from the mirror, no Python
    downloaded), then torch and what only torch needs dropped from what it wrote."""
    assert project.lock is not None
    env, args = export_command(project.lock.path, project.extras, project.groups)
    tool = (kit.install.uv, "tool", "run", "--no-cache", "--no-python-downloads")
    drop = ("python3", in_image("drop_requirements.py"), *project.not_from_lock)
    return (
        words((*env, *tool, *kit.install.uv_options(), *args, "--output", EXPORTED)),
        f"{words(drop)} < {EXPORTED} > {LOCKED}",
        f"rm -f {EXPORTED} .pdm-python",  # PDM notes the Python it exported with
    )


def backend_layer(kit: Kit) -> Layer | None:
    requirements = kit.plan.packages.build_backend
    if not requirements or kit.locked:
        return None
    comments = lines("""\
9. The build backend of the project installed editable at the container's first start (its
   pyproject.toml's [build-system] requires): that install builds with it, asking no index.
   Only what the environment lacks: what the layers above installed stays as it is.""")
    missing = words(("python", in_image("missing_requirements.py"), *requirements))
    install = words((*kit.command, *kit.install.indexes()))
    commands = (
        f"{missing} > /tmp/envkit-backend.txt",
        f"if [ -s /tmp/envkit-backend.txt ]; then {install} -r /tmp/envkit-backend.txt; fi",
        "rm -f /tmp/envkit-backend.txt",
    )
    programs = copy_programs("missing_requirements.py")
    return Layer(comments, (programs, hadolint(OWN, run(kit.cache, *commands))))


def own_pip_layers(kit: Kit) -> tuple[Layer, ...]:
    """packages.pip entries with options of their own, a layer each (plan/image/pip_options.py); a
    private index's credentials come from the building machine's netrc as a BuildKit secret."""
    if kit.locked:
        return ()
    packages = kit.plan.packages
    layers = []
    for package in packages.pip_own:
        comment = f"9. {package.requirement} (packages.pip) in a layer of its own"
        command = kit.command
        if package.no_build_isolation:
            comment += ", built against the environment's torch and build tools"
            comment += " (--no-build-isolation)"
            command += ("--no-build-isolation",)
        comments: tuple[str, ...] = (comment + ".",)
        command += kit.install.indexes()
        if package.index:
            first = " (first)" if kit.install.uses_uv else ""
            comments += (
                f"   {package.index} asked too{first}; its credentials, if any, from the building "
                "machine's netrc as a BuildKit secret, in no layer.",
            )
            command += ("--extra-index-url", package.index)
        if package.find_links:
            comments += (f"   Its files are found on {package.find_links} too.",)
            command += ("--find-links", package.find_links)
        mounts = kit.mounts(kit.install.cache, *((packages.netrc,) if package.index else ()))
        install = run(mounts, words((*command, "--", package.requirement)))
        layers.append(Layer(comments, (hadolint(OWN, install),)))
    return tuple(layers)
