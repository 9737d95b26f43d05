"""A command in a container as a person runs it: as the member's login user, in a login shell
(the environment an SSH login gets: /etc/profile.d/00-envkit.sh, the conda env, PATH), in the
workspace. Through the Docker CLI where it is installed: it owns the terminal (raw mode, window
size, Ctrl-C) and reaches every engine envkit does (DOCKER_HOST, contexts, ssh://, Podman's
socket). Without it, through the SDK: output streamed and the exit code passed through, but no
terminal and no stdin."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from envkit.errors import EnvkitError

# Runs COMMAND in a login shell started in DIR: bash -l reads /etc/profile (and so envkit's
# environment) and the user's own profile, then becomes the command.
LOGIN_EXEC = 'cd "$1" 2>/dev/null || cd; shift; exec "$@"'


@dataclass(frozen=True)
class InContainer:
    container: str
    user: str
    workdir: str


def docker_cli() -> str | None:
    return shutil.which("docker")


def shell_argv(where: InContainer, tty: bool) -> list[str]:
    """The docker CLI's argv for an interactive login shell."""
    terminal = ["-t"] if tty else []
    user = ["-u", where.user, "-w", where.workdir]
    return ["docker", "exec", "-i", *terminal, *user, where.container, "bash", "-l"]


def exec_argv(where: InContainer, command: list[str], stdin: bool, tty: bool) -> list[str]:
    """The docker CLI's argv for COMMAND in the login environment; -i only where stdin is
    given, -t only where both ends are terminals."""
    flags = (["-i"] if stdin else []) + (["-t"] if tty else [])
    login = ["bash", "-lc", LOGIN_EXEC, "envkit-exec", where.workdir, *command]
    return ["docker", "exec", *flags, "-u", where.user, where.container, *login]


def run_cli(argv: list[str]) -> int:
    """The Docker CLI in the foreground, this terminal handed over; its exit code."""
    argv = [docker_cli() or "docker", *argv[1:]]
    try:
        return subprocess.run(argv, check=False).returncode
    except KeyboardInterrupt:
        return 130


def exec_sdk(client: Any, where: InContainer, command: list[str]) -> int:
    """COMMAND through the SDK (no Docker CLI here): its output streamed, its exit code."""
    api = client.api
    argv = ["bash", "-lc", LOGIN_EXEC, "envkit-exec", where.workdir, *command]
    created = api.exec_create(where.container, argv, user=where.user, stdout=True, stderr=True)
    for out, err in api.exec_start(created["Id"], stream=True, demux=True):
        if out:
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()
        if err:
            sys.stderr.buffer.write(err)
            sys.stderr.buffer.flush()
    code = api.exec_inspect(created["Id"]).get("ExitCode")
    return int(code) if code is not None else 1


def no_terminal_error() -> EnvkitError:
    return EnvkitError(
        "an interactive shell needs the Docker CLI (`docker`), which this machine lacks",
        "install the Docker CLI (its client alone is enough), or `envkit exec -- CMD`, or ssh in",
    )
