"""Where members' work lives: the project folder mounted in every container (`workspace:`),
and the caches they share (`runtime.shared_cache`). Homes are volumes of their own, always."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from envkit.config.fields import Strict
from envkit.errors import FieldError


def _host_folder(value: str) -> str:
    fix = "write a folder relative to envkit.yaml (e.g. '.', 'code') or an absolute path"
    if not re.fullmatch(r"[A-Za-z0-9_.+/-]+", value) or "//" in value:
        raise FieldError("not a plain path (letters, digits, . _ + - and /)", fix)
    if not value.startswith("/") and ".." in value.split("/"):
        raise FieldError("a relative path that leaves the project's folder", fix)
    return value


def _container_folder(value: str) -> str:
    fix = "write an absolute path in the container such as /workspace"
    if not re.fullmatch(r"/[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)*", value):
        raise FieldError("not an absolute, plain path in the container", fix)
    if any(part in (".", "..") for part in value.split("/")):
        raise FieldError("a path with . or .. in it", fix)
    reserved = ("/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/opt", "/proc", "/sys", "/dev")
    if value in reserved or value.startswith(("/opt/envkit", "/var/lib/envkit", "/run/envkit")):
        raise FieldError(f"{value} is the system's or envkit's own folder", fix)
    return value


HostFolder = Annotated[str, AfterValidator(_host_folder)]
ContainerFolder = Annotated[str, AfterValidator(_container_folder)]


def _shorthand(value: Any) -> Any:
    """`workspace: false` turns it off; `workspace: code` names the folder."""
    if isinstance(value, bool):
        return {"enabled": value}
    return {"path": value} if isinstance(value, str) else value


class Workspace(Strict):
    """The project's folder, bind-mounted into every container: what a member edits there is
    the host's file, owned by the member's UID/GID, and no rebuild or removal touches it."""

    enabled: bool = Field(True, description="Mount the project folder in every container.")
    path: HostFolder = Field(
        ".",
        description="The host folder: relative to envkit.yaml (default: its folder), or absolute "
        "(on a remote engine: a path on the engine's machine).",
    )
    target: ContainerFolder = Field("/workspace", description="Where it is in the container.")


WorkspaceField = Annotated[Workspace, BeforeValidator(_shorthand)]
