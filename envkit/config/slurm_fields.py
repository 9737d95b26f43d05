"""Field types of the `slurm:` section: Slurm's names and time limits, the nodes' interpreter,
the container the suite runs in, the shared folder. The patterns are exported for the command
line's values, which `envkit verify --slurm` checks the same way (cluster/slurm_job.py)."""

from __future__ import annotations

from typing import Annotated

from envkit.config.fields import matching

SLURM_NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
SLURM_TIME_PATTERN = r"(?:\d{1,3}-)?\d{1,2}(?::\d{2}){0,2}"
SHARED_FOLDER_PATTERN = r"[A-Za-z0-9_./~+-]{1,1024}"
NODE_PROGRAM_PATTERN = r"/?[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)*"
SlurmName = Annotated[
    str,
    matching(
        SLURM_NAME_PATTERN,
        "Slurm name",
        "use letters, digits, '.', '-' and '_' as Slurm does for partitions and accounts, "
        "e.g. 'gpu'",
    ),
]
SlurmTime = Annotated[
    str,
    matching(
        SLURM_TIME_PATTERN,
        "Slurm time limit",
        "write it as Slurm does: MINUTES, MM:SS, HH:MM:SS or D-HH:MM:SS, e.g. '30:00'",
    ),
]
# The node's interpreter, or a path inside a container or an apptainer image.
NodeProgram = Annotated[
    str,
    matching(
        NODE_PROGRAM_PATTERN,
        "program or path",
        "give a command name on the node's PATH (python3) or an absolute path "
        "(/opt/envs/vision/bin/python)",
    ),
]
SharedFolder = Annotated[
    str,
    matching(
        SHARED_FOLDER_PATTERN,
        "folder",
        "give a folder on the cluster's shared filesystem, e.g. ~/scratch/envkit or "
        "/shared/envkit (letters, digits, '/', '.', '_', '-', '+', '~')",
    ),
]
ContainerSource = Annotated[
    str,
    matching(
        r"[A-Za-z0-9_./:@#+-]{1,512}",
        "container image for the cluster",
        "pyxis: an image reference (nvcr.io#nvidia/pytorch:24.05-py3) or a .sqsh path; "
        "apptainer: a .sif path or docker://IMAGE",
    ),
]
