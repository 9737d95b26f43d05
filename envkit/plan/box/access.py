"""Who gets in and where: authorized keys, the login user, and one service per container."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

from envkit.addresses import is_wildcard, parse_mapping
from envkit.config.load import LoadedSpec, Loc
from envkit.config.model import Spec
from envkit.errors import ConfigError, ConfigIssue, FieldError
from envkit.files import read_regular
from envkit.plan.box.keys import PublicKey, looks_private, parse_public_key


@dataclass(frozen=True)
class Service:
    """One container: the shared one, or one per team member."""

    name: str  # compose service name
    container_name: str
    member: str | None
    user: str
    uid: int
    gid: int
    ssh_port: int
    keys_dir: str  # folder holding its authorized_keys in the render output, mounted read-only
    keys: tuple[str, ...]  # authorized_keys lines
    notebook_port: int | None = None  # host ports of JupyterLab and TensorBoard, when enabled
    tensorboard_port: int | None = None
    gpus: str | int | tuple[str, ...] = "none"  # its GPUs: the member's, else runtime.gpus
    cpus: float | None = None  # per-member limits
    memory: str | None = None


# Where a container's activity watch (envkit/runtime/activity.py) keeps its last look: in the
# container's own filesystem, so it outlives a stop and `envkit status` can read it after one.
ACTIVITY_FILE = "/var/lib/envkit/activity.json"
KEY_FILE_LIMIT = 256 * 1024  # a few thousand keys; a key file is never bigger


@dataclass(frozen=True)
class KeyEntry:
    """One candidate key line: from envkit.yaml itself, or line `number` of a named file (whose
    content is never quoted back: a wrong file may hold credentials)."""

    loc: Loc
    text: str
    file: str | None = None
    number: int = 0
    total: int = 0


def _key_file_lines(loaded: LoadedSpec, loc: Loc, raw: str) -> list[KeyEntry]:
    path = loaded.user_path(raw)
    with loaded.blaming(loc, raw):
        data = read_regular(
            path, KEY_FILE_LIMIT, "key file", " (a .pub file, relative to envkit.yaml)"
        )
        text = data.decode("utf-8", "replace")
        if looks_private(text):
            # Say which file, never what is in it.
            raise FieldError(
                f"{path} holds a PRIVATE key; it was not read further or copied anywhere",
                f"point to the public half instead, e.g. {path}.pub",
            )
    numbered = [
        (number, ln)
        for number, ln in enumerate(text.splitlines(), 1)
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    total = len(text.splitlines())
    return [KeyEntry(loc, ln, str(path), number, total) for number, ln in numbered]


def _parse_all(loaded: LoadedSpec, entries: list[KeyEntry]) -> tuple[str, ...]:
    issues: list[ConfigIssue] = []
    keys: list[PublicKey] = []
    bad_files: set[str] = set()
    for entry in entries:
        try:
            keys.append(parse_public_key(entry.text))
        except FieldError as exc:
            if entry.file is None:
                shown = None if looks_private(entry.text) else entry.text
                issues.append(loaded.issue(entry.loc, exc.problem, exc.fix, shown))
            elif entry.file not in bad_files:  # one issue per file, its content not quoted
                bad_files.add(entry.file)
                problem = (
                    f"key file {entry.file}: line {entry.number} of {entry.total}: {exc.problem}"
                )
                issues.append(loaded.issue(entry.loc, problem, exc.fix))
    if issues:
        raise ConfigError(str(loaded.path), issues)
    return tuple(dict.fromkeys(k.line for k in keys))  # keep order, drop repeats


def admin_keys(loaded: LoadedSpec) -> tuple[str, ...]:
    ssh = loaded.spec.ssh
    entries = [
        KeyEntry(("ssh", "authorized_keys", i), k) for i, k in enumerate(ssh.authorized_keys)
    ]
    for i, raw in enumerate(ssh.authorized_key_files):
        entries += _key_file_lines(loaded, ("ssh", "authorized_key_files", i), raw)
    return _parse_all(loaded, entries)


def member_keys(loaded: LoadedSpec, index: int) -> tuple[str, ...]:
    member = loaded.spec.team.members[index]
    return _parse_all(
        loaded,
        [KeyEntry(("team", "members", index, "keys", i), k) for i, k in enumerate(member.keys)],
    )


def _same_socket(one: tuple[str, int, str], other: tuple[str, int, str]) -> bool:
    """Two publications need the same host socket: same port and protocol, and the same address
    or a wildcard (no address: Docker binds every IPv4 and IPv6 one)."""
    wild = is_wildcard(one[0]) or is_wildcard(other[0])
    return one[1:] == other[1:] and (one[0] == other[0] or wild)


def _check_ports(loaded: LoadedSpec, services: list[Service]) -> None:
    taken: dict[int, str] = {}
    issues = []
    published: list[tuple[str, int, str]] = []
    for mapping_index, mapping in enumerate(loaded.spec.runtime.ports):
        address, host_port, _, proto = parse_mapping(mapping)
        here = (address, host_port, proto)
        clash = next((i for i, seen in enumerate(published) if _same_socket(seen, here)), None)
        if clash is not None:
            issues.append(
                loaded.issue(
                    ("runtime", "ports", mapping_index),
                    f"host port {host_port}/{proto} is already published by runtime.ports[{clash}]",
                    "give each mapping its own host port",
                    mapping,
                )
            )
        published.append(here)
        taken.setdefault(host_port, f"runtime.ports[{mapping_index}]")
    for service in services:
        owner = f"member {service.member}" if service.member else "ssh.port"
        if service.ssh_port in taken:
            loc: Loc = ("ssh", "port")
            if service.member is not None:
                index = [m.name for m in loaded.spec.team.members].index(service.member)
                loc = ("team", "members", index, "port")
            issues.append(
                loaded.issue(
                    loc,
                    f"host port {service.ssh_port} for {owner} is already used by "
                    f"{taken[service.ssh_port]}",
                    "give each container its own port (set team.members[].port or ssh.port)",
                    service.ssh_port,
                )
            )
        taken[service.ssh_port] = owner
        issues += _notebook_port_issues(loaded, service, owner, taken)
    if len(services) > 1 and loaded.spec.runtime.ports:
        # Every container publishes runtime.ports, and a host port can go to one of them only.
        issues.append(
            loaded.issue(
                ("runtime", "ports", 0),
                f"in per-member mode each of the {len(services)} containers would publish "
                f"{loaded.spec.runtime.ports[0]}, and a host port can go to only one",
                "remove runtime.ports (members can tunnel with `ssh -L`), or use team.mode: shared",
                loaded.spec.runtime.ports[0],
            )
        )
    if issues:
        raise ConfigError(str(loaded.path), issues)


AUTO_PORT_SPAN = 1000  # derived member ports lie in ssh.port + 1 .. ssh.port + 1000


def member_port(base: int, name: str) -> int:
    """A member's host port when envkit.yaml sets none: derived from the name alone, so adding or
    removing a member never moves anyone else's port (which would recreate their container and
    break their ~/.ssh/config). Two names that land on one port are reported by the port check,
    and the fix is to set one of them."""
    return base + 1 + zlib.crc32(name.encode()) % AUTO_PORT_SPAN


def plan_services(loaded: LoadedSpec, uid: int, gid: int) -> tuple[Service, ...]:
    spec = loaded.spec
    admins = admin_keys(loaded)
    members = spec.team.members
    if spec.team.mode == "shared" or not members:
        keys = admins + tuple(k for i in range(len(members)) for k in member_keys(loaded, i))
        services = [
            Service(
                name=spec.name,
                container_name=spec.name,
                member=None,
                user=spec.ssh.user,
                uid=spec.ssh.uid or uid,
                gid=spec.ssh.gid or gid,
                ssh_port=spec.ssh.port,
                keys_dir=f"keys/{spec.name}",
                keys=tuple(dict.fromkeys(keys)),
                gpus=spec.runtime.gpus,
            )
        ]
    else:
        services = [
            Service(
                name=f"{spec.name}-{member.name}",
                container_name=f"{spec.name}-{member.name}",
                member=member.name,
                user=member.name,
                uid=member.uid or spec.ssh.uid or uid,
                gid=spec.ssh.gid or gid,
                ssh_port=member.port or member_port(spec.ssh.port, member.name),
                keys_dir=f"keys/{spec.name}-{member.name}",
                keys=tuple(dict.fromkeys(admins + member_keys(loaded, index))),
                gpus=spec.runtime.gpus if member.gpus is None else member.gpus,
                cpus=member.cpus,
                memory=member.memory,
            )
            for index, member in enumerate(members)
        ]
    services = [_with_notebook(spec, s) for s in services]
    _check_ports(loaded, services)
    return tuple(services)


def _notebook_port_issues(
    loaded: LoadedSpec, service: Service, owner: str, taken: dict[int, str]
) -> list[ConfigIssue]:
    issues = []
    for field, port in (
        (("notebook", "port"), service.notebook_port),
        (("notebook", "tensorboard", "port"), service.tensorboard_port),
    ):
        if port is None:
            continue
        what = ".".join(str(part) for part in field)
        if port in taken:
            issues.append(
                loaded.issue(
                    field,
                    f"host port {port} for {owner}'s {field[-2]} is already used by {taken[port]}",
                    f"choose another {what}",
                    port,
                )
            )
        taken[port] = f"{owner}'s {field[-2]}"
    return issues


def _with_notebook(spec: Spec, service: Service) -> Service:
    """JupyterLab's and TensorBoard's host ports: the configured ones for the shared container,
    derived from them per member the same stable way as SSH ports."""
    notebook = spec.notebook
    if not notebook.enabled:
        return service

    def port(base: int) -> int:
        return base if service.member is None else member_port(base, service.member)

    board = notebook.tensorboard
    return replace(
        service,
        notebook_port=port(notebook.port),
        tensorboard_port=port(board.port) if board.enabled else None,
    )
