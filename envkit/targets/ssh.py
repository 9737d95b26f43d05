"""ssh://user@host:port: a machine or container reached over SSH (paramiko), keys only."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from envkit.errors import EngineUnreachableError
from envkit.targets.base import CommandResult


class _AcceptNew:
    """OpenSSH's StrictHostKeyChecking=accept-new: trust a first key, refuse a changed one."""

    def __init__(self, known_hosts: Path) -> None:
        self.known_hosts = known_hosts

    def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
        client.get_host_keys().add(hostname, key.get_name(), key)
        self.known_hosts.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self.known_hosts.open("a") as handle:
            handle.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


class SshTarget:
    def __init__(self, url: str) -> None:
        import paramiko

        parts = urlsplit(url)
        if not parts.hostname or not parts.username:
            raise EngineUnreachableError(
                f"{url} is not ssh://USER@HOST[:PORT]", "write the target as ssh://dev@gpu-box:8822"
            )
        query = parse_qs(parts.query)
        self.name = url
        self.client = paramiko.SSHClient()
        known = Path(query.get("known_hosts", ["~/.ssh/known_hosts"])[0]).expanduser()
        if known.is_file():
            self.client.load_host_keys(str(known))
        self.client.set_missing_host_key_policy(_AcceptNew(known))  # type: ignore[arg-type]
        identity = query.get("identity")
        try:
            self.client.connect(
                parts.hostname,
                port=parts.port or 22,
                username=parts.username,
                key_filename=str(Path(identity[0]).expanduser()) if identity else None,
                allow_agent=identity is None,
                look_for_keys=identity is None,
                timeout=15,
                auth_timeout=15,
                banner_timeout=15,
            )
        except paramiko.BadHostKeyException:
            raise EngineUnreachableError(
                f"{parts.hostname}'s host key changed since {known} recorded it",
                "if the container was recreated on purpose: "
                f"ssh-keygen -R '[{parts.hostname}]:{parts.port}'",
            ) from None
        except (paramiko.SSHException, OSError) as exc:
            raise EngineUnreachableError(
                f"cannot reach {url}: {exc}",
                "check the host and port, and that your key is authorized",
            ) from None

    def put(self, data: bytes, remote_path: str) -> None:
        with self.client.open_sftp() as sftp, sftp.open(remote_path, "wb") as handle:
            handle.write(data)

    def run(self, argv: list[str], timeout: float) -> CommandResult:
        command = " ".join(shlex.quote(a) for a in argv)
        _, stdout, stderr = self.client.exec_command(command, timeout=timeout)
        out = stdout.read().decode(errors="replace")
        err = stderr.read().decode(errors="replace")
        return CommandResult(stdout.channel.recv_exit_status(), out, err)

    def get(self, remote_path: str) -> bytes:
        with self.client.open_sftp() as sftp, sftp.open(remote_path, "rb") as handle:
            return bytes(handle.read())

    def close(self) -> None:
        self.client.close()
