"""What `envkit doctor` reports, judged from the host's record (doctor/facts.py) by pure checks:
each `check_x(host) -> Finding` reads the record and nothing else, so every verdict can be tested
from a record made by hand. A finding: the check, its verdict, what was seen and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from envkit.addresses import LOOPBACKS, is_wildcard, parse_mapping
from envkit.catalog.compat import driver_verdict, version_key
from envkit.doctor.facts import HostRecord
from envkit.engine.builders import BUILDX_HINT
from envkit.errors import EnvkitError
from envkit.plan.box.notebook import notebook_publications

FindingStatus = Literal["ok", "info", "warn", "fail"]


@dataclass(frozen=True)
class Finding:
    check: str
    status: FindingStatus
    message: str
    fix: str | None = None


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


def check_config(host: HostRecord) -> Finding:
    if not host.config_given:
        return Finding(
            "config",
            "warn",
            "no envkit.yaml here: only the host was checked",
            "run `envkit doctor` next to envkit.yaml, or pass --config",
        )
    if host.config_error is not None or host.plan is None:
        exc = host.config_error or EnvkitError("envkit.yaml could not be read")
        fix = exc.fix or "fix the fields named above, then run `envkit doctor` again"
        return Finding("config", "fail", exc.message if exc.fix else str(exc), fix)
    return Finding("config", "ok", f"{host.config_path} is valid (project {host.plan.project})")


def check_engine(host: HostRecord) -> Finding:
    if host.engine is None:
        exc = host.engine_error or EnvkitError("no engine answered")
        return Finding("engine", "fail", exc.message, exc.fix)
    version, facts = host.engine.version, host.engine.facts
    engine = str(version.get("Version", "?"))
    text = f"{facts.name} (API {version.get('ApiVersion', '?')})"
    if facts.remote:
        text += f", remote at {facts.endpoint.url} ({facts.endpoint.source})"
    if facts.podman:
        return Finding("engine", "ok", text + ": its Docker-compatible API")
    if version_key(engine) < (19, 3):
        return Finding("engine", "fail", f"{text}: GPU requests need 19.03 or newer", "upgrade")
    return Finding("engine", "ok", text)


def check_compose(host: HostRecord) -> Finding:
    found = host.compose
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


def check_builder(host: HostRecord) -> Finding:
    """Which builder `envkit build` will use, and what a missing buildx costs."""
    wanted = host.plan.install.builder if host.plan is not None else "auto"
    if host.engine is not None and host.engine.facts.podman:
        if wanted == "buildkit":
            return Finding(
                "builder",
                "fail",
                "build.builder is buildkit, but the engine is Podman",
                "set build.builder to auto or classic: Podman builds with buildah",
            )
        return Finding("builder", "ok", "Podman builds with buildah (the classic build call)")
    if (version := host.buildx) is not None:
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


def check_emulation(host: HostRecord) -> Finding:
    """Whether the platforms: the engine does not run natively can be built and run here."""
    native = host.engine.facts.platform if host.engine is not None else "?"
    wanted = [p for p in (host.plan.platforms if host.plan else ()) if p != native]
    if host.engine is not None and host.engine.facts.remote:
        return Finding(
            "emulation",
            "info",
            f"the engine is remote ({native}): whether its host emulates other platforms is "
            "its own to say (a build for one it cannot run fails at its first RUN step)",
        )
    missing = [e for e in host.emulation if not e.registered and e.platform in wanted]
    if missing:
        from envkit.engine.emulation import REGISTER_FIX
        from envkit.platforms import architecture

        arch = architecture(missing[0].platform)
        return Finding(
            "emulation",
            "fail",
            f"platforms: asks for {missing[0].platform} on this {native} engine, and "
            f"{missing[0].detail}",
            REGISTER_FIX.format(machine=arch.machine, arch=arch.arch),
        )
    seen = "; ".join(e.detail for e in host.emulation) or "no other platform to emulate"
    if wanted:
        return Finding("emulation", "ok", f"{', '.join(wanted)} built under QEMU: {seen}")
    return Finding("emulation", "info", f"{seen} (platforms: names only {native})")


def _gpu_need(host: HostRecord, check: str, problem: str, fix: str) -> Finding:
    """A missing GPU piece: a failure when envkit.yaml asks for GPUs, else only information."""
    if host.plan is not None and host.plan.runtime.gpus != "none":
        return Finding(check, "fail", f"{problem}, but envkit.yaml asks for GPUs", fix)
    why = "runtime.gpus is none" if host.plan is not None else "no envkit.yaml asks for GPUs"
    return Finding(check, "info", f"{problem} (fine: {why})", None)


def check_nvidia_runtime(host: HostRecord) -> Finding:
    """Judged by what envkit will request on this engine (engine/facts.py), so a host doctor
    calls healthy is one whose containers get their GPUs."""
    facts = host.engine.facts if host.engine is not None else None
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


def check_driver(host: HostRecord) -> Finding:
    found = host.smi
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


def check_disk(host: HostRecord) -> Finding:
    probe, free_gb = host.disk_path, host.disk_free_gb
    need = IMAGE_GB.get(host.plan.image.flavor, 4) if host.plan is not None else 4
    text = f"{free_gb:.0f} GB free at {probe} (the image needs about {need} GB)"
    built = host.built_image
    if built is not None:  # only changed layers are rebuilt from here on
        need = 1
        text = f"{free_gb:.0f} GB free at {probe}; {built[0]} is built ({built[1]:.1f} GB)"
    if free_gb < need:
        return Finding("disk", "fail", text, f"free space at {probe}: `docker system prune`")
    if free_gb < 2 * need:
        return Finding("disk", "warn", text, "leave room for rebuilds: `docker system prune`")
    return Finding("disk", "ok", text)


def check_ports(host: HostRecord) -> Finding:
    plan = host.plan
    if plan is None:
        return Finding("ports", "info", "no envkit.yaml: no ports to check")
    ours, taken = host.running, host.taken
    if taken:
        return Finding(
            "ports",
            "fail",
            f"host port(s) that cannot be published: {', '.join(map(str, taken))}",
            "pick other ports or addresses in envkit.yaml, or stop what holds them (`ss -ltnp`)",
        )
    running = f"; {len(ours)} container(s) of {plan.project} already up" if ours else ""
    return Finding("ports", "ok", f"the ports envkit.yaml asks for are free{running}")


def check_exposure(host: HostRecord) -> Finding:
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


def check_revocation(host: HostRecord) -> Finding:
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


def check_member_gpus(host: HostRecord) -> Finding:
    """Each member's GPUs against the host's: the assignment `envkit up` would make."""
    found = host.member_gpus
    if found is None:
        return Finding("gpu assignment", "info", "not checked: the engine is on another machine")
    if found.unknown is not None:
        return Finding(
            "gpu assignment",
            "warn",
            f"this host's GPUs cannot be listed ({found.unknown})",
            "install the NVIDIA driver, or run doctor on the GPU server",
        )
    if found.refused is not None:
        return Finding("gpu assignment", "fail", found.refused.message, found.refused.fix)
    parts = [f"{who}: {','.join(ids)}" for who, ids in found.assigned]
    names = ", ".join(f"{g.index} {g.name}" for g in found.host)
    return Finding("gpu assignment", "ok", f"{'; '.join(parts)} (host: {names})")


def check_idle_holders(host: HostRecord) -> Finding:
    """Containers that hold GPU memory while idle past the limit (team.idle_stop, else a day)."""
    idle = host.idle
    if idle is None:
        return Finding("idle gpu holders", "info", "not checked: no local GPU containers")
    if idle.unread:
        return Finding("idle gpu holders", "info", f"GPU use not read: {idle.unread}")
    if not idle.holders:
        return Finding(
            "idle gpu holders", "ok", f"no container holds a GPU idle {idle.limit_s:.0f} s+"
        )
    return Finding(
        "idle gpu holders",
        "warn",
        f"idle past {idle.limit_s:.0f} s while holding GPU memory: {', '.join(idle.holders)}",
        "ask them to end their jobs, or `docker stop` the container (set team.idle_stop to "
        "have envkit stop idle containers)",
    )


def check_departed_homes(host: HostRecord) -> Finding:
    """Homes kept for members who left team.members: never deleted by a routine command."""
    homes = host.departed_homes
    if not homes:
        return Finding("departed homes", "ok", "every home volume belongs to a listed member")
    listed = ", ".join(
        f"{v.member} ({v.size / 1e6:.1f} MB)" if v.size is not None else f"{v.member}"
        for v in homes
    )
    return Finding(
        "departed homes",
        "info",
        f"kept for members no longer in team.members: {listed}",
        "`envkit backup NAME`, then `envkit member remove NAME --delete-home` when it may go",
    )


def findings(host: HostRecord) -> list[Finding]:
    """Every check, in the order doctor prints them; the team's only where they apply."""
    found = [check_config(host), check_engine(host), check_compose(host), check_builder(host)]
    if host.engine is not None:
        found += [check_emulation(host), check_nvidia_runtime(host)]
    found += [check_driver(host), check_disk(host), check_ports(host)]
    found += [check_exposure(host), check_revocation(host)]
    if host.member_gpus is not None:
        found.append(check_member_gpus(host))
    if host.idle is not None:
        found.append(check_idle_holders(host))
    if host.plan is not None and host.engine is not None:
        found.append(check_departed_homes(host))
    return found
