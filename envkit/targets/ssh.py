"""ssh://user@host:port: a machine or container reached with the OpenSSH client, keys only.

The system `ssh` is used rather than a Python SSH library: it speaks the post-quantum hybrid key
exchange envkit's sshd offers (paramiko does not, for sntrup761), and it honours the user's own
~/.ssh/config (ProxyJump to a container published on the host's loopback, agents, certificates).
Every call has a deadline; a peer that stops answering is dropped by ServerAlive probes."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from envkit.errors import EngineUnreachableError
from envkit.processes import quiet_output
from envkit.targets.base import CommandResult, Target, TargetDeadlineError

CONNECT_TIMEOUT_S = 10  # TCP connect and the SSH handshake (OpenSSH's ConnectTimeout covers both)
ALIVE_INTERVAL_S = 5  # a peer that stops answering is dropped after 3 unanswered probes


class SshTarget(Target):
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)  # parse_target has refused one without a user and a host
        if shutil.which("ssh") is None:
            raise EngineUnreachableError(
                "the OpenSSH client (ssh) is not installed here",
                "install it (Debian/Ubuntu: apt-get install openssh-client)",
            )
        self.name = url
        self.host, self.port, self.user = parts.hostname, parts.port or 22, parts.username
        query = parse_qs(parts.query)
        settings = (
            "BatchMode=yes",  # never prompt: keys or agent only
            f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            f"ServerAliveInterval={ALIVE_INTERVAL_S}",
            "ServerAliveCountMax=3",
            "StrictHostKeyChecking=accept-new",  # trust a first key, refuse a changed one
            "LogLevel=INFO",  # keeps "Timeout, server not responding"; ERROR would drop it
        )
        self.options = ["-T", "-p", str(self.port), *(w for s in settings for w in ("-o", s))]
        if "known_hosts" in query:
            known = Path(query["known_hosts"][0]).expanduser()
            self.options += ["-o", f"UserKnownHostsFile={known}"]
        if "identity" in query:
            identity = Path(query["identity"][0]).expanduser()
            self.options += ["-i", str(identity), "-o", "IdentitiesOnly=yes"]
        self._probe()

    def _ssh(self, command: str, timeout: float, stdin: bytes | None = None) -> CommandResult:
        process = subprocess.Popen(
            ["ssh", *self.options, "--", f"{self.user}@{self.host}", command],
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # Ctrl-C in envkit is handled by envkit, not by ssh
        )
        try:
            out, err = process.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise TargetDeadlineError(
                f"{self.name} did not answer within {timeout:.0f}s",
                "the suite ends by itself on the host (it runs under timeout(1) there); "
                "raise --target-timeout if it needs longer",
            ) from None
        noise = "Warning: Permanently added"  # accept-new recording a first host key
        errors = "".join(
            line for line in err.decode(errors="replace").splitlines(True) if noise not in line
        )
        result = CommandResult(process.returncode, out.decode(errors="replace"), errors)
        if result.exit_code == 255:  # ssh's own failure, not the remote command's
            raise self._ssh_failure(result.stderr)
        return result

    def _ssh_failure(self, stderr: str) -> EngineUnreachableError:
        said = (stderr.strip().splitlines() or ["no message"])[-1]
        if "Permission denied" in said:
            return EngineUnreachableError(
                f"{self.name} refused the key: {said}",
                "authorize your public key (team.members[].keys or ssh.authorized_keys, then "
                "`envkit up`), or pass ?identity=PATH in the target URL",
            )
        if "Host key verification failed" in said or "REMOTE HOST IDENTIFICATION" in stderr:
            return EngineUnreachableError(
                f"{self.host}'s host key changed since it was recorded",
                "if the container was recreated on purpose: "
                f"ssh-keygen -R '[{self.host}]:{self.port}'",
            )
        if not stderr.strip() or any(
            sign in said for sign in ("not responding", "Broken pipe", "reset", "closed by")
        ):
            return EngineUnreachableError(
                f"{self.name} stopped answering mid-session ({said})",
                "check that the host is up and not overloaded, then run verify again",
            )
        return EngineUnreachableError(
            f"cannot reach {self.name}: {said}",
            "check the host and port, and that your key is authorized",
        )

    def _probe(self) -> None:
        """Say plainly what is wrong with the address before OpenSSH does it vaguely: nothing
        listening, no answer, or a port that accepts TCP but never speaks SSH. Skipped where the
        user's ssh config routes the connection elsewhere (ProxyJump, ProxyCommand, an alias)."""
        host, port = self._direct_address()
        if host is None:
            return
        try:
            with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S) as sock:
                sock.settimeout(CONNECT_TIMEOUT_S)
                banner = sock.recv(64)
        except TimeoutError:
            raise EngineUnreachableError(
                f"{host}:{port} accepted no connection, or sent no SSH banner, "
                f"within {CONNECT_TIMEOUT_S}s",
                "check that sshd runs there (`envkit status`) and that the port is the SSH one",
            ) from None
        except OSError as exc:
            raise EngineUnreachableError(
                f"cannot connect to {host}:{port}: {exc.strerror or exc}",
                "check the host and port (`envkit status` shows the published port)",
            ) from None
        if not banner.startswith(b"SSH-"):
            shown = banner[:20].decode("ascii", "replace").strip() or "nothing"
            raise EngineUnreachableError(
                f"{host}:{port} answers, but not as an SSH server (it sent {shown!r})",
                "point the target at the container's SSH port (`envkit status`)",
            )

    def _direct_address(self) -> tuple[str | None, int]:
        out = quiet_output(["ssh", "-G", *self.options, "--", f"{self.user}@{self.host}"], 10)
        if out is None:
            return None, self.port
        settings = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
        if settings.get("proxyjump", "none") != "none" or "proxycommand" in settings:
            return None, self.port
        return settings.get("hostname", self.host), int(settings.get("port", self.port))

    def put(self, data: bytes, remote_path: str) -> None:
        directory = shlex.quote(str(Path(remote_path).parent))
        command = f"mkdir -p {directory} && cat > {shlex.quote(remote_path)}"
        done = self._ssh(command, timeout=120, stdin=data)
        if done.exit_code != 0:
            raise EngineUnreachableError(
                f"could not write {remote_path} on {self.name}: {done.stderr.strip()[-200:]}",
                "check free space in the target's /tmp",
            )

    def run(self, argv: list[str], timeout: float) -> CommandResult:
        return self._ssh(" ".join(shlex.quote(a) for a in argv), timeout=timeout)
