"""Programs envkit ships into the image as they are (checked by ruff and mypy like the rest of
envkit, and parsed as Python 3.8 by a test): the build context carries each file unchanged, and
what differs per environment is data rendered beside it.

May import: nothing of envkit; the standard library only, since its programs run inside images
(conda_tool.py also py-rattler and ruamel.yaml, which its own venv in the image carries)."""

# The small programs the build itself runs (torch's check and constraints, what a build backend
# lacks): copied into the image by each layer that runs one, and run as files there.
IMAGE_PROGRAMS = "/opt/envkit/programs"
BUILD_PROGRAMS = (
    "torch_needs.py",
    "torch_check.py",
    "missing_requirements.py",
    "drop_requirements.py",
)


def in_image(program: str) -> str:
    """Where PROGRAM (one of BUILD_PROGRAMS) is in the image."""
    return f"{IMAGE_PROGRAMS}/{program}"


def copy_programs(*programs: str) -> str:
    """The COPY of the programs a layer runs, as that layer's first instruction: a change to one
    rebuilds only from the first layer that runs it, never the apt or conda layers above."""
    return f"COPY {' '.join(f'envkit/programs/{p}' for p in programs)} {IMAGE_PROGRAMS}/"
