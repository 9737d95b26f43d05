"""The image's Python and conda layers: where Python comes from (Miniforge, the rattler
bootstrap's py-rattler venv and envkit-conda, a venv on the system Python, or the base image's
own, with uv added), then conda's channels and the environment (environment.yml solved, or an
explicit list installed exactly: a --locked build's, or the project's own conda-lock.yml or
pixi.lock)."""

from __future__ import annotations

import shlex
from typing import NamedTuple

from envkit.plan.image.conda_bootstrap import CONDA_TOOL_DIR, RATTLER_MIN_PYTHON, RATTLER_VENV
from envkit.plan.image.dockerfile import (
    CONSTRAINTS,
    WITHOUT_CONSTRAINTS,
    Kit,
    Layer,
    hadolint,
    lines,
    noted,
    run,
    words,
)
from envkit.plan.image.install import OFFLINE, Mount
from envkit.plan.models.plan import Plan
from envkit.runtime import copy_programs, in_image

CONDA_TOOL = "envkit-conda"  # on PATH in /usr/local/bin (the rattler bootstrap)
ENVIRONMENT_FILE = "/opt/envkit/environment.yml"
# The project's conda-lock.yml or pixi.lock, as render writes it for the build.
PROJECT_CONDA_EXPLICIT = "envkit/project/conda-explicit.txt"
PROJECT_CONDA_PYPI = "envkit/project/conda-lock-pypi.txt"
PROJECT_CONDA_UNHASHED = "envkit/project/conda-lock-unhashed.txt"
SEPARATE = "   Separate RUN layers from here on are deliberate: each is its own cache step."


def _python_run(
    kit: Kit, python: str, comments: tuple[str, ...], commands: tuple[str, ...], *mounts: Mount
) -> Layer:
    """The Python layer's RUN, then uv's bootstrap by PYTHON's pip where uv installs."""
    uv = kit.uv(python)
    if uv:
        comments, commands = (*comments, *uv.comments), (*commands, uv.command)
        mounts = (*mounts, kit.install.pip_cache)
    flags = kit.mounts(*dict.fromkeys(mounts))  # once each: the rattler venv's pip uses it too
    return Layer(comments, (hadolint("DL3059", run(flags, *commands)),))


def python_layer(kit: Kit) -> Layer | None:
    """Where the environment's Python comes from: at most one of these layers."""
    plan = kit.plan
    if plan.conda.bootstrap == "rattler":
        return _rattler(kit)
    if plan.conda.bootstrap == "miniforge":
        return _miniforge(kit)
    if plan.python.provider == "venv":
        comment = "3. Python: a venv on the system Python that still sees apt's python3-* packages."
        venv = ("python3 -m venv --system-site-packages /opt/venv",)
        return _python_run(kit, "/opt/venv/bin/python", (comment, SEPARATE), venv)
    if kit.uv("python") is None:
        return None
    return _python_run(kit, "python", ("3. Python: the base image's own.",), ())


MINIFORGE = f"""\
3. Python: Miniforge (conda-forge by default; Anaconda's channels only when asked).
{SEPARATE}
   The installer runs as root: its checksum is checked before it runs."""


def _miniforge(kit: Kit) -> Layer:
    """Miniforge's installer, checked against its pinned sum before it runs as root. Under
    BuildKit it stays in a cache mount, named by its sum, and is downloaded only when missing."""
    conda = kit.plan.conda
    comments = lines(MINIFORGE)
    arches = "".join(f"\n      {arch}) sum={sha} ;; \\" for arch, sha in conda.installer_sha256)
    if conda.installer_sha256[0][0] != "*":  # no sum for other architectures: refuse them
        arches += '\n      *) echo "envkit: no pinned Miniforge checksum for $(uname -m)" >&2; '
        arches += "exit 1 ;; \\"
    commands: tuple[str, ...] = (f'case "$(uname -m)" in \\{arches}\n    esac',)
    if kit.buildkit:
        comments += ("   A download already in the cache mount is used when its checksum matches.",)
        installer = f"{kit.install.downloads.target}/miniforge-$sum.sh"
        commands += (
            f'if ! echo "$sum  {installer}" | sha256sum -c --status - 2>/dev/null; then \\\n'
            f'      curl -fsSL -o "{installer}" "{conda.installer_url}"; fi',
        )
    else:
        installer = "/tmp/miniforge.sh"  # noqa: S108 - a path in the image's build, removed after
        commands += (f'curl -fsSL -o {installer} "{conda.installer_url}"',)
    commands += (
        f'echo "$sum  {installer}" | sha256sum -c -',
        f'bash "{installer}" -b -p /opt/conda',
    )
    commands += () if kit.buildkit else (f"rm -f {installer}",)
    return _python_run(kit, "/opt/conda/bin/python", comments, commands, kit.install.downloads)


RATTLER = f"""\
3. Python: conda's tooling from the pip mirror, nothing from GitHub: py-rattler (the solver
   and installer under pixi) in a venv of its own, every wheel checked against its pinned
   sha256, and envkit-conda, which makes the environment from the image's .condarc.
{SEPARATE}"""


def _rattler(kit: Kit) -> Layer:
    """conda's tooling from the pip mirror (plan/image/conda_bootstrap.py): py-rattler, installed by
    hash into a venv of its own, and envkit-conda on every PATH."""
    python = f"{RATTLER_VENV}/bin/python"
    major, minor = RATTLER_MIN_PYTHON
    check = ("python3", "-c", f"import sys; sys.exit(sys.version_info < ({major}, {minor}))")
    needs = f"needs python3 {major}.{minor} or newer in the base image"
    comments = lines(RATTLER)
    commands = (
        f"{{ {words(check)} \\\n      || "
        f'{{ echo "envkit: the conda bootstrap (py-rattler) {needs}" >&2; exit 1; }}; }}',
        f"python3 -m venv {RATTLER_VENV}",
        kit.hashed(python, f"{CONDA_TOOL_DIR}/requirements.txt"),
        f"install -m 0755 {CONDA_TOOL_DIR}/envkit-conda /usr/local/bin/envkit-conda",
    )
    layer = _python_run(kit, python, comments, commands, kit.install.pip_cache)
    return Layer(layer.comments, (f"COPY envkit/conda/ {CONDA_TOOL_DIR}/", *layer.instructions))


def conda_layer(kit: Kit) -> Layer | None:
    """conda's channels (.condarc) and, where envkit makes or updates it, the environment."""
    plan = kit.plan
    if not plan.conda.in_image:
        return None
    copy = f"COPY envkit/condarc {plan.conda.rc.path}"
    if not plan.conda.update_env:
        return Layer(("4. conda: its channels.",), (copy,))
    # The environment's torch is kept while pip runs (torch_needs.py: envkit-conda's or the RUN's).
    instructions: tuple[str, ...] = (copy, copy_programs("torch_needs.py"))
    cuda = plan.torch.cuda
    if cuda and cuda != "cpu":
        why = f"conda solves for CUDA {cuda} even on a builder without a GPU (the __cuda virtual"
        instructions += (noted((f"{why} package).",), f"ENV CONDA_OVERRIDE_CUDA={cuda}"),)
    explicit = _explicit(kit)
    instructions += explicit if explicit else _solved(kit)
    return Layer(("4. conda: its channels and the environment.",), instructions)


class EnvRun(NamedTuple):
    """What the environment's RUN has whichever way it is made, per builder."""

    notes: tuple[str, ...]  # above the first COPY: where the downloads go
    mounts: tuple[str, ...]
    assigned: str  # variables set for the conda command alone
    clean: tuple[str, ...]  # the classic builder: downloads removed in the same layer

    def run(self, *commands: str) -> str:
        return hadolint("DL3059", run(self.mounts, *commands, *self.clean))


def _env_run(kit: Kit, keep: bool) -> EnvRun:
    """conda's downloads (and pip's, for a pip section or a lock's PyPI packages) in cache
    mounts under BuildKit; removed in the same layer under the classic builder."""
    conda, install = kit.plan.conda, kit.install
    pip = bool(conda.solved_pip)
    lock = conda.lock
    pypi = lock is not None and bool(lock.pypi) and not kit.locked
    assigned = f"CONDA_PKGS_DIRS={install.conda_pkgs.target} " if kit.buildkit else ""
    assigned += "PIP_CONFIG_FILE=/opt/envkit/pip.conf " if pip else ""
    assigned += f"PIP_CONSTRAINT={CONSTRAINTS} " if keep else ""
    mounts = kit.mounts(install.conda_pkgs, *((install.pip_cache,) if pip or pypi else ()))
    if not kit.buildkit:
        return EnvRun((), mounts, assigned, (words(_conda_clean(conda.bootstrap)),))
    also = " (and pip's, for the environment's pip section)" if pip else ""
    return EnvRun((f"conda's package downloads{also} stay in cache mounts.",), mounts, assigned, ())


def _solved(kit: Kit) -> tuple[str, ...]:
    """environment.yml solved: envkit's own environment made, or the base image's updated with
    its torch pinned for conda's solve and, for the file's pip section, kept as the torch layer
    keeps it for every later install."""
    plan = kit.plan
    conda, torch = plan.conda, plan.torch
    pip = bool(conda.solved_pip)
    pinned = _keeps_torch(plan)
    env = _env_run(kit, pinned and pip)
    copy = noted(env.notes, "COPY environment.yml /opt/envkit/environment.yml")
    if pip:
        why = "The environment's pip section reads the mirror from envkit's pip.conf."
        copy = noted((*env.notes, why), "COPY environment.yml envkit/pip.conf /opt/envkit/")
    notes: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    if pinned:
        notes = (
            "The image's torch stays put while conda solves for the environment "
            f"(conda-meta/pinned){',' if pip else '.'}",
        )
        pin = shlex.quote(f"pytorch =={torch.version}")
        commands = (f"echo {pin} >> /opt/conda/conda-meta/pinned",)
    if pinned and pip:
        notes += (
            "and while pip runs its pip section: torch, its CUDA libraries and numpy's major "
            "kept (PIP_CONSTRAINT).",
        )
        keep = words(("python", in_image("torch_needs.py")))
        commands += (f"mkdir -p /etc/envkit && {keep} > {CONSTRAINTS}",)
    command = env.assigned + words(_env_command(plan))
    return (copy, noted(notes, env.run(*commands, command)))


def _env_command(plan: Plan) -> tuple[str, ...]:
    """What makes the environment from environment.yml: envkit's own env (Miniforge's conda or
    envkit-conda), or an update of the base image's."""
    conda = plan.conda
    prefix = f"/opt/conda/envs/{conda.env_name}"
    if conda.bootstrap == "miniforge":
        return ("conda", "env", "create", "-p", prefix, "-f", ENVIRONMENT_FILE)
    if conda.bootstrap == "rattler":
        return (CONDA_TOOL, "create", "-p", prefix, "-f", ENVIRONMENT_FILE)
    return ("conda", "env", "update", "-p", "/opt/conda", "-f", ENVIRONMENT_FILE)


def _explicit(kit: Kit) -> tuple[str, ...] | None:
    """envkit.lock's conda packages (a --locked build) or the project's own conda lock, as an
    explicit list installed exactly, then the project's lock's PyPI packages, if any."""
    plan = kit.plan
    conda = plan.conda
    if plan.locked and plan.locked.conda_explicit:
        files = ("envkit/lock/conda-explicit.txt", "/opt/envkit/lock/conda-explicit.txt")
        why = "The locked environment: exactly the lock's package files, no solve."
    elif conda.lock is not None:
        files = (PROJECT_CONDA_EXPLICIT, f"/opt/envkit/{PROJECT_CONDA_EXPLICIT[len('envkit/') :]}")
        why = (
            f"The project's {conda.lock.source}: its {conda.lock.platform} packages exactly, "
            "each checked against the lock's checksum, no solve."
        )
    else:
        return None
    target = str(plan.conda_prefix)
    if conda.bootstrap == "rattler":
        command: tuple[str, ...] = (CONDA_TOOL, "create", "-p", target, "--explicit", files[1])
        if kit.install.offline:  # the files from the bundle's conda/, each held to its hash
            command += ("--from", f"{OFFLINE}/conda")
            why += " Each file from the bundle, nothing fetched."
    else:
        verb = "create" if conda.creates_env else "install"
        command = ("conda", verb, "-y", "-p", target, "--file", files[1])
    env = _env_run(kit, _keeps_torch(plan) and bool(conda.solved_pip))
    copies: tuple[str, ...] = (noted(env.notes, f"COPY {files[0]} {files[1]}"),)
    commands: tuple[str, ...] = (env.assigned + words(command),)
    notes: tuple[str, ...] = (why,)
    for context_file, image_file, install, said in _lock_pypi(kit):
        copies += (f"COPY {context_file} {image_file}",)
        commands += (install,)
        notes += (said,)
    return (*copies, noted(notes, env.run(*commands)))


def _keeps_torch(plan: Plan) -> bool:
    """conda updates the base image's environment, whose torch stays."""
    return not plan.conda.creates_env and plan.torch.preinstalled and bool(plan.torch.version)


def _lock_pypi(kit: Kit) -> list[tuple[str, str, str, str]]:
    """The project's conda lock's PyPI packages: (context file, image file, install, why) for
    those with a sha256 (by version through the pip mirror, or by the lock's URL; each file
    checked, --require-hashes) and for git packages (by the commit the lock resolved)."""
    plan = kit.plan
    lock = plan.conda.lock
    if lock is None or not lock.pypi or kit.locked:
        return []
    # The environment need not hold pip (pixi installs PyPI packages with its own installer):
    # the bootstrap's pip (rattler's venv, or Miniforge's or the base image's conda) installs
    # into it (`pip --python`).
    rattler = plan.conda.bootstrap == "rattler"
    host = f"{RATTLER_VENV}/bin/python" if rattler else "/opt/conda/bin/python"
    into = ("--python", f"{plan.conda_prefix}/bin/python")
    found = []
    if any(digest for _, _, digest in lock.pypi):
        image = "/opt/" + PROJECT_CONDA_PYPI
        said = "Then its PyPI packages, each at its locked version (from the pip mirror) or URL, "
        found.append(
            (PROJECT_CONDA_PYPI, image, kit.hashed(host, image, into), said + "by sha256.")
        )
    if lock.unhashed:
        image = "/opt/" + PROJECT_CONDA_UNHASHED
        pip = (host, "-m", "pip", *into, "install", *kit.no_cache, "--no-deps")
        pip += (*kit.install.pip_indexes(), "-r", image)  # its build backend from the mirror
        said = (
            "And those it holds no sha256 for, unchecked: git packages at the commit the lock "
            f"resolved, files by their https URL ({', '.join(lock.unhashed)[:300]})."
        )
        found.append((PROJECT_CONDA_UNHASHED, image, words((*WITHOUT_CONSTRAINTS, *pip)), said))
    return found


CONDA_PIP = "envkit/conda-pip.txt"  # the pip section, where it installs after torch


def conda_pip_layer(kit: Kit) -> Layer | None:
    """The environment file's pip section, after envkit's torch and under its constraints."""
    if not kit.plan.conda.pip_after_torch or kit.locked:
        return None
    image = f"/opt/{CONDA_PIP}"
    install = run(kit.cache, words((*kit.command, *kit.install.indexes(), "-r", image)))
    comments = lines("""\
6. The environment file's pip section, from the mirror: after torch, so that a package of it
   that wants another torch fails here, naming both, instead of bringing its own.""")
    return Layer(comments, (f"COPY {CONDA_PIP} {image}", hadolint("DL3013,DL3059", install)))


def _conda_clean(bootstrap: str | None) -> tuple[str, ...]:
    """What removes the downloaded packages where no cache mount keeps them out of the layer."""
    if bootstrap == "rattler":
        return ("rm", "-rf", "/opt/conda/pkgs")  # envkit-conda's cache without CONDA_PKGS_DIRS
    return ("conda", "clean", "-afy")
