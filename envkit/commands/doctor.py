"""`envkit doctor`: check the host before anything is built. Each finding says what was looked at,
what was found, and the fix. Nothing here changes the host or the engine."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.addresses import LOOPBACKS, is_wildcard, parse_mapping
from envkit.catalog.compat import version_key
from envkit.commands.doctor_findings import Finding, FindingStatus, Host
from envkit.errors import EXIT_CHECKS_FAILED, EXIT_OK, EnvkitError
from envkit.plan.notebook import notebook_publications

if TYPE_CHECKING:
    pass

CDI_FIX = (
    "generate a CDI spec for the GPUs: `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`"
    " (NVIDIA Container Toolkit 1.12+)"
)
TOOLKIT_FIX = (
    "install the NVIDIA Container Toolkit, then `sudo nvidia-ctk runtime configure "
    "--runtime=docker && sudo systemctl restart docker`"
)
# Rough image sizes (GB) by base, for the free-disk check: the published images' unpacked
# sizes, rounded up, plus room for envkit's layers and the build's intermediate copies.
IMAGE_GB = {"pytorch": 12, "cuda": 14, "custom": 4}


def check_config(config: str | None, host: Host) -> Finding:
    from envkit.commands.project import load_project
    from envkit.config.load import config_given

    if not config_given(config):
        return Finding(
            "config",
            "warn",
            "no envkit.yaml here: only the host was checked",
            "run `envkit doctor` next to envkit.yaml, or pass --config",
        )
    try:
        project = load_project(config)
        host.plan, host.project = project.plan, project
    except EnvkitError as exc:
        fix = exc.fix or "fix the fields named above, then run `envkit doctor` again"
        return Finding("config", "fail", exc.message if exc.fix else str(exc), fix)
    return Finding("config", "ok", f"{project.config} is valid (project {project.plan.project})")


def check_engine(host: Host) -> Finding:
    from envkit.engine.client import docker_client
    from envkit.engine.facts import engine_facts

    try:
        host.client = docker_client()
        version = host.client.version()
        host.info = host.client.info()
        host.facts = engine_facts(host.client, version, host.info)
    except EnvkitError as exc:
        return Finding("engine", "fail", exc.message, exc.fix)
    engine = str(version.get("Version", "?"))
    text = f"{host.facts.name} (API {version.get('ApiVersion', '?')})"
    if host.facts.remote:
        text += f", remote at {host.facts.endpoint.url} ({host.facts.endpoint.source})"
    if host.facts.podman:
        return Finding("engine", "ok", text + ": its Docker-compatible API")
    if version_key(engine) < (19, 3):
        return Finding("engine", "fail", f"{text}: GPU requests need 19.03 or newer", "upgrade")
    return Finding("engine", "ok", text)


def _compose_version() -> tuple[str, str] | None:
    docker = shutil.which("docker")
    candidates = [([docker, "compose", "version", "--short"], "v2")] if docker else []
    legacy = shutil.which("docker-compose")
    if legacy:
        candidates.append(([legacy, "version", "--short"], "v1"))
    for command, kind in candidates:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=30)
        if done.returncode == 0 and done.stdout.strip():
            version = done.stdout.strip().lstrip("v")
            return ("v2" if version_key(version) >= (2,) else kind), version
    return None


def check_compose(host: Host) -> Finding:
    found = _compose_version()
    if found is None:
        return Finding(
            "compose",
            "warn",
            "neither `docker compose` nor `docker-compose` is installed; "
            "`envkit up` will start containers through the docker SDK instead",
            "install the Compose plugin (apt install docker-compose-plugin) for `docker compose`",
        )
    kind, version = found
    if kind == "v1" and version_key(version) < (1, 28):
        return Finding(
            "compose",
            "warn",
            f"docker-compose {version} predates GPU device reservations (1.28)",
            "upgrade to the Compose plugin (v2); until then set ENVKIT_COMPOSE=sdk",
        )
    return Finding("compose", "ok", f"Compose {kind} ({version})")


def check_builder(host: Host) -> Finding:
    """Which builder `envkit build` will use, and what a missing buildx costs."""
    from envkit.engine.builders import BUILDX_HINT, buildx_version

    wanted = host.plan.install.builder if host.plan is not None else "auto"
    if host.facts is not None and host.facts.podman:
        if wanted == "buildkit":
            return Finding(
                "builder",
                "fail",
                "build.builder is buildkit, but the engine is Podman",
                "set build.builder to auto or classic: Podman builds with buildah",
            )
        return Finding("builder", "ok", "Podman builds with buildah (the classic build call)")
    version = buildx_version()
    if version is not None:
        used = "BuildKit" if wanted != "classic" else "the classic builder (build.builder)"
        return Finding("builder", "ok", f"{used}; docker buildx: {version}")
    if wanted == "buildkit":
        return Finding(
            "builder",
            "fail",
            "build.builder is buildkit, but the Docker CLI has no buildx",
            BUILDX_HINT,
        )
    return Finding(
        "builder",
        "warn",
        "the classic builder: the Docker CLI has no buildx, so no cache mounts (every rebuilt "
        "layer downloads its packages again)",
        BUILDX_HINT,
    )


def _wants_gpus(host: Host) -> bool:
    return host.plan is not None and host.plan.runtime.gpus != "none"


def _gpu_need(host: Host, check: str, problem: str, fix: str) -> Finding:
    """A missing GPU piece: a failure when envkit.yaml asks for GPUs, else only information."""
    if _wants_gpus(host):
        return Finding(check, "fail", f"{problem}, but envkit.yaml asks for GPUs", fix)
    why = "runtime.gpus is none" if host.plan is not None else "no envkit.yaml asks for GPUs"
    return Finding(check, "info", f"{problem} (fine: {why})", None)


def check_nvidia_runtime(host: Host) -> Finding:
    """Judged by what envkit will request on this engine (engine/facts.py), so a host doctor
    calls healthy is one whose containers get their GPUs."""
    facts = host.facts
    if facts is None:
        return Finding("nvidia-runtime", "info", "no engine answered: GPU access not checked")
    path = facts.gpu_path
    if path == "nvidia":
        how = "the nvidia runtime" if "nvidia" in facts.runtimes else "the NVIDIA toolkit's hook"
        return Finding(
            "nvidia-runtime", "ok", f"GPUs through {how}: envkit requests them with driver nvidia"
        )
    if path == "cdi":
        names = ", ".join(facts.cdi_gpus[:4]) + (" …" if len(facts.cdi_gpus) > 4 else "")
        if facts.podman:
            return Finding(
                "nvidia-runtime",
                "ok",
                f"Podman with a CDI spec ({names}): envkit requests GPUs by CDI name",
            )
        if version_key(facts.name.rsplit(" ", 1)[-1]) >= (25,):
            return Finding(
                "nvidia-runtime",
                "ok",
                f"CDI only ({names}), no nvidia runtime: envkit requests GPUs with driver cdi "
                "(the engine's cdi feature must be on: `docker info` lists CDI spec dirs)",
            )
        return _gpu_need(
            host,
            "nvidia-runtime",
            f"a CDI spec names GPUs ({names}), but {facts.name} cannot use CDI (Docker 25+ can) "
            "and has no nvidia runtime",
            TOOLKIT_FIX,
        )
    if facts.podman:
        problem = "Podman gives GPUs only through CDI, and no CDI spec names one"
        return _gpu_need(host, "nvidia-runtime", problem, CDI_FIX)
    problem = (
        "the engine has no NVIDIA runtime or CDI spec (runtimes: "
        f"{', '.join(facts.runtimes) or 'none'}), so containers cannot be given GPUs"
    )
    return _gpu_need(host, "nvidia-runtime", problem, TOOLKIT_FIX)


def _nvidia_smi() -> tuple[str, list[str]] | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    done = subprocess.run(
        [smi, "--query-gpu=driver_version,name", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    rows = [r.split(",", 1) for r in done.stdout.strip().splitlines() if "," in r]
    if done.returncode != 0 or not rows:
        return None
    return rows[0][0].strip(), [name.strip() for _, name in rows]


def check_driver(host: Host) -> Finding:
    from envkit.catalog.compat import driver_verdict

    found = _nvidia_smi()
    if found is None:
        problem = "no NVIDIA driver on this host (nvidia-smi is missing or sees no GPU)"
        return _gpu_need(host, "driver", problem, "install the NVIDIA driver, then `nvidia-smi`")
    driver, gpus = found
    seen = f"driver {driver}, {len(gpus)} GPU(s): {', '.join(sorted(set(gpus)))}"
    cuda = host.plan.cuda if host.plan is not None else None
    if cuda is None:
        return Finding("driver", "ok", f"{seen}; no CUDA version in envkit.yaml to compare with")
    verdict, explanation = driver_verdict(cuda, driver)
    statuses: dict[str, FindingStatus] = {"ok": "ok", "compat": "warn", "too-old": "fail"}
    status = statuses[verdict]
    floor = cuda.min_driver or cuda.family_min_driver
    fix = None if verdict == "ok" else f"upgrade the driver to >= {floor}"
    if verdict == "too-old":
        fix = f"{fix}, or choose an older `cuda:` in envkit.yaml (`envkit compat`)"
    return Finding("driver", status, f"{seen}; image CUDA {cuda.version}: {explanation}", fix)


def check_disk(host: Host) -> Finding:
    root = Path(str((host.info or {}).get("DockerRootDir") or "/var/lib/docker"))
    probe = root if root.exists() else Path.cwd()
    free_gb = shutil.disk_usage(probe).free / 1e9
    need = IMAGE_GB.get(host.plan.image.flavor, 4) if host.plan is not None else 4
    text = f"{free_gb:.0f} GB free at {probe} (the image needs about {need} GB)"
    built = _built_image(host)
    if built is not None:  # only changed layers are rebuilt from here on
        need = 1
        text = f"{free_gb:.0f} GB free at {probe}; {built[0]} is built ({built[1]:.1f} GB)"
    if free_gb < need:
        return Finding("disk", "fail", text, f"free space at {probe}: `docker system prune`")
    if free_gb < 2 * need:
        return Finding("disk", "warn", text, "leave room for rebuilds: `docker system prune`")
    return Finding("disk", "ok", text)


def _built_image(host: Host) -> tuple[str, float] | None:
    """The project's image tag and size in GB, when it is already built."""
    if host.client is None or host.plan is None:
        return None
    from docker.errors import DockerException

    tag = str(host.plan.image.tag)
    try:
        image = host.client.images.get(tag)
    except DockerException:
        return None
    return tag, float(image.attrs.get("Size", 0)) / 1e9


def check_ports(host: Host) -> Finding:
    from envkit.engine.client import running_containers
    from envkit.engine.compose import taken_ports

    plan = host.plan
    if plan is None:
        return Finding("ports", "info", "no envkit.yaml: no ports to check")
    ours = running_containers(host.client, plan.project) if host.client is not None else set()
    taken = taken_ports(plan, ours)
    if taken:
        return Finding(
            "ports",
            "fail",
            f"host port(s) that cannot be published: {', '.join(map(str, taken))}",
            "pick other ports or addresses in envkit.yaml, or stop what holds them (`ss -ltnp`)",
        )
    running = f"; {len(ours)} container(s) of {plan.project} already up" if ours else ""
    return Finding("ports", "ok", f"the ports envkit.yaml asks for are free{running}")


def check_exposure(host: Host) -> Finding:
    """Ports published on every interface are reachable from the network, and Docker's own
    firewall rules put them ahead of the host's (ufw/firewalld do not filter them)."""
    plan = host.plan
    if plan is None:
        return Finding("exposure", "info", "no envkit.yaml: no published ports to judge")
    public = []
    if plan.ssh.enabled and any(is_wildcard(address) for address in plan.ssh.bind):
        public += [f"{s.ssh_port} (ssh, {s.container_name})" for s in plan.services]
    for mapping in plan.runtime.ports:
        address, port, _, _ = parse_mapping(mapping)  # no address: every interface
        if is_wildcard(address):
            public.append(f"{port} (runtime.ports)")
    for service in plan.services:  # a notebook anywhere but loopback: its token is all that guards
        for published in notebook_publications(plan.notebook, service):
            if published.address not in LOOPBACKS:
                what = published.field.split(".")[-2]
                public.append(
                    f"{published.address}:{published.host_port} ({what}, {service.container_name})"
                )
    if public:
        return Finding(
            "exposure",
            "warn",
            f"published beyond loopback, reachable from the network: {', '.join(public)}; "
            "Docker's published ports bypass the host firewall",
            "publish on loopback (ssh.bind: [127.0.0.1, '::1'], runtime.ports '127.0.0.1:H:C', "
            "notebook.bind: 127.0.0.1) and connect with `ssh -J THIS_HOST` (`envkit ssh-config "
            "--host THIS_HOST` writes it, the notebook's LocalForward too)",
        )
    return Finding("exposure", "ok", "every published port is bound to a specific address")


def check_revocation(host: Host) -> Finding:
    """Whether removing a member from envkit.yaml really locks them out."""
    plan = host.plan
    if plan is None or not plan.ssh.enabled:
        return Finding("access", "info", "no SSH access to judge")
    if not any(service.keys for service in plan.services):
        return Finding(
            "access",
            "warn",
            "no SSH key is authorized: nobody can log in (docker exec still works)",
            "add keys to ssh.authorized_key_files or team.members[].keys",
        )
    shared = len(plan.services) == 1 and plan.members
    if shared and plan.ssh.sudo:
        return Finding(
            "access",
            "warn",
            "team.mode shared with ssh.sudo: every member is root in the one container, so a "
            "removed member could have left themselves a way back in",
            "for revocation that holds use team.mode: per-member, or set ssh.sudo: false",
        )
    return Finding(
        "access", "ok", "keys come only from envkit.yaml; removing one locks its holder out"
    )


def doctor(config: str | None, json_out: bool) -> int:
    """`envkit doctor`: the findings as a table or JSON; exit 1 when one fails."""
    import json

    findings = run_doctor(config)
    if json_out:
        sys.stdout.write(json.dumps(as_json(findings), indent=2) + "\n")
    else:
        print_findings(findings)
    return EXIT_CHECKS_FAILED if any(f.status == "fail" for f in findings) else EXIT_OK


def run_doctor(config: str | None) -> list[Finding]:
    from envkit.commands.doctor_team import team_findings

    host = Host()
    findings = [check_config(config, host), check_engine(host)]
    findings += [check_compose(host), check_builder(host)]
    if host.client is not None:
        findings.append(check_nvidia_runtime(host))
    findings += [check_driver(host), check_disk(host), check_ports(host)]
    findings += [check_exposure(host), check_revocation(host)]
    findings += team_findings(host)
    return findings


def as_json(findings: list[Finding]) -> dict[str, Any]:
    return {
        "ok": not any(f.status == "fail" for f in findings),
        "findings": [asdict(f) for f in findings],
    }


MARK = {
    "ok": "[green]ok[/]",
    "info": "[blue]info[/]",
    "warn": "[yellow]warn[/]",
    "fail": "[bold red]FAIL[/]",
}


def print_findings(findings: list[Finding]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="envkit doctor", title_justify="left", show_lines=True)
    for column in ("", "check", "finding", "fix"):
        table.add_column(column, overflow="fold")
    for f in findings:
        table.add_row(MARK[f.status], f.check, f.message, f.fix or "")
    console = Console()
    console.print(table)
    failed = [f.check for f in findings if f.status == "fail"]
    console.print(
        f"[bold red]{len(failed)} problem(s) to fix first: {', '.join(failed)}[/]"
        if failed
        else "[green]this host is ready for envkit build / envkit up[/]"
    )
