"""JupyterLab (and TensorBoard) in the box: what the image installs, how the container serves
them, where the host publishes them. Ports per container are in access.py's Service."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from envkit.config.model import Spec

if TYPE_CHECKING:
    from envkit.plan.box.access import Service

CONTAINER_PORT = 8888  # inside every container; the host side is the service's notebook_port
TENSORBOARD_CONTAINER_PORT = 6006
# Where the token lives: the container's state volume (the same one as its host keys), so it
# survives restarts and recreation but is never in the image or the compose file.
TOKEN_FILE = "/var/lib/envkit/hostkeys/notebook-token"  # noqa: S105 - a path, not a secret


@dataclass(frozen=True)
class NotebookPlan:
    enabled: bool
    jupyterlab: str
    kernel: str
    display_name: str
    bind: tuple[str, ...]  # host addresses both ports are published on
    tensorboard: bool
    tensorboard_version: str
    logdir: str  # relative to the login home

    @property
    def requirements(self) -> tuple[str, ...]:
        wanted = [f"jupyterlab=={self.jupyterlab}", "ipykernel"]
        if self.tensorboard:
            wanted.append(f"tensorboard=={self.tensorboard_version}")
        return tuple(wanted)


def plan_notebook(spec: Spec) -> NotebookPlan:
    notebook = spec.notebook
    kernel = notebook.kernel or spec.name.replace("_", "-")
    return NotebookPlan(
        enabled=notebook.enabled,
        jupyterlab=notebook.jupyterlab,
        kernel=kernel,
        display_name=f"Python ({kernel})",
        bind=tuple(notebook.bind),
        tensorboard=notebook.enabled and notebook.tensorboard.enabled,
        tensorboard_version=notebook.tensorboard.version,
        logdir=notebook.tensorboard.logdir,
    )


class Publication(NamedTuple):
    """One published notebook port: compose publishes it, the SDK path maps it, `up` checks it
    is free and doctor judges its address."""

    address: str  # on the host
    host_port: int
    container_port: int
    field: str  # the envkit.yaml field that chose the port


def notebook_publications(notebook: NotebookPlan, service: Service) -> list[Publication]:
    """The service's JupyterLab and TensorBoard ports, on every address of notebook.bind."""
    if not notebook.enabled or service.notebook_port is None:
        return []
    ports = [(service.notebook_port, CONTAINER_PORT, "notebook.port")]
    if service.tensorboard_port is not None:
        board = TENSORBOARD_CONTAINER_PORT
        ports.append((service.tensorboard_port, board, "notebook.tensorboard.port"))
    return [Publication(a, *port) for port in ports for a in notebook.bind]
