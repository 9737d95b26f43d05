"""A private Slurm cluster on this machine for tests and benchmarks: Debian's munged, slurmctld
and one slurmd per node name (Slurm's multiple-slurmd mode: `slurmd -N NAME`, own port, spool and
log each), configured in a temporary folder on free ports, torn down after.

Planted breakage, per node: a TaskProlog that, for a node marked broken, puts a `torch` that
cannot be imported first on the tasks' PYTHONPATH, as a bad install on one node would. Nodes
listed in `absent` are in slurm.conf but get no slurmd (a node that never starts)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from tests.helpers import free_port

DAEMONS = ("munged", "slurmctld", "slurmd")


TASK_PROLOG = """#!/bin/sh
# Runs before every task; what it prints as `export NAME=VALUE` enters the task's environment.
if [ -e "{root}/broken/$SLURMD_NODENAME" ]; then
  echo "export PYTHONPATH={root}/broken-torch"
fi
"""


class SlurmCluster:
    def __init__(
        self,
        root: Path,
        nodes: tuple[str, ...],
        absent: tuple[str, ...] = (),
        scheduler_parameters: str | None = None,
    ) -> None:
        self.root, self.nodes, self.absent = root, nodes, absent
        self.scheduler_parameters = scheduler_parameters
        self.conf = root / "slurm.conf"
        # Every node is this machine: a health run's node state (a drain, a burn-in) is the
        # cluster's own file, never the host's /var/lib/envkit, where it would outlive the
        # tests and keep this machine "out" for every later `envkit health`.
        self.state_file = root / "node-state.json"
        self.env = dict(
            os.environ, SLURM_CONF=str(self.conf), ENVKIT_NODE_STATE=str(self.state_file)
        )
        self.pids: list[int] = []

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> SlurmCluster:
        missing = [
            d for d in DAEMONS if shutil.which(d) is None and not Path(f"/usr/sbin/{d}").exists()
        ]
        if missing:
            raise RuntimeError(f"{', '.join(missing)} missing: run `make system-deps`")
        if os.geteuid() != 0:
            raise RuntimeError("the private Slurm cluster runs its daemons as root")
        for sub in ("munge", "state", "log", "spool", "broken", "broken-torch/torch"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "munge").chmod(0o755)
        self._write_files()
        self._run(
            [
                "munged",
                "--force",
                f"--socket={self.munge_socket}",
                f"--key-file={self.root}/munge/key",
                f"--log-file={self.root}/munge/log",
                f"--pid-file={self.root}/munge/pid",
                f"--seed-file={self.root}/munge/seed",
            ]
        )
        self._run(["slurmctld", "-f", str(self.conf)])
        for node in self.nodes:
            self._run(["slurmd", "-f", str(self.conf), "-N", node])
        self.wait_idle(self.nodes)
        return self

    def stop(self) -> None:
        """TERM to the daemons, then KILL to every process that still carries this cluster's
        SLURM_CONF (daemons, slurmstepd, job tasks): a slurmd busy with a step can outlive
        its pid file."""
        for pidfile in [*self.root.glob("*.pid"), self.root / "munge" / "pid"]:
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
        deadline = time.monotonic() + 3
        while self._ours() and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in self._ours():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def _ours(self) -> list[int]:
        marker = f"SLURM_CONF={self.conf}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    # ------------------------------------------------------------------ helpers for tests

    @property
    def munge_socket(self) -> Path:
        return self.root / "munge" / "sock"

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)

    def break_node(self, node: str, broken: bool = True) -> None:
        flag = self.root / "broken" / node
        if broken:
            flag.touch()
        else:
            flag.unlink(missing_ok=True)

    def node_state(self, node: str) -> str:
        return self.run("sinfo", "-h", "-N", "-n", node, "-o", "%T").stdout.strip()

    def wait_idle(self, nodes: tuple[str, ...], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = {n: self.node_state(n) for n in nodes}
            if all(s == "idle" for s in states.values()):
                return
            time.sleep(0.5)
        logs = (self.root / "log" / "slurmctld.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"nodes not idle after {timeout:.0f} s: {states}\n{logs}")

    def resume(self, node: str) -> None:
        self.run("scontrol", "update", f"nodename={node}", "state=resume")
        self.wait_idle((node,))

    def queue(self) -> list[str]:
        return self.run("squeue", "-h", "-o", "%i %j %T").stdout.split("\n")[:-1]

    def drained_queue(self, wait_s: float = 30) -> list[str]:
        """The queue once cancelled jobs have finished COMPLETING (Slurm ends their processes
        after KillWait; a loaded machine takes longer), or what is still in it after wait_s."""
        deadline = time.monotonic() + wait_s
        while (left := self.queue()) and all("COMPLETING" in job for job in left):
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        return left

    # ------------------------------------------------------------------ configuration

    def _run(self, argv: list[str]) -> None:
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} did not start: {done.stderr or done.stdout}")

    def _write_files(self) -> None:
        key = self.root / "munge" / "key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
            key.chmod(0o400)
        (self.root / "broken-torch" / "torch" / "__init__.py").write_text(
            'raise ImportError("planted: this node\'s torch is broken")\n'
        )
        prolog = self.root / "task-prolog.sh"
        prolog.write_text(TASK_PROLOG.format(root=self.root))
        prolog.chmod(0o755)
        root = self.root
        lines = [
            "ClusterName=envkittest",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={root}/state",
            f"SlurmdSpoolDir={root}/spool/%n",
            f"SlurmctldPidFile={root}/slurmctld.pid",
            f"SlurmdPidFile={root}/slurmd-%n.pid",
            f"SlurmctldLogFile={root}/log/slurmctld.log",
            f"SlurmdLogFile={root}/log/slurmd-%n.log",
            f"TaskProlog={prolog}",
            # No cgroups in a test sandbox: plain process tracking, no task binding.
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            "SlurmdTimeout=30",
            "MinJobAge=60",
            # Seconds between a cancel's SIGTERM and SIGKILL (default 30): a cancelled test job
            # leaves squeue in about a second instead of sitting in COMPLETING.
            "KillWait=3",
            "MpiDefault=none",
        ]
        if self.scheduler_parameters:
            lines.append(f"SchedulerParameters={self.scheduler_parameters}")
        for node in (*self.nodes, *self.absent):
            lines.append(
                f"NodeName={node} NodeHostname=localhost NodeAddr=127.0.0.1 Port={free_port()} "
                "CPUs=2 RealMemory=2000 State=UNKNOWN"
            )
        every = ",".join((*self.nodes, *self.absent))
        lines.append(
            f"PartitionName=debug Nodes={every} Default=YES MaxTime=INFINITE State=UP "
            "OverSubscribe=FORCE:4"
        )
        self.conf.write_text("\n".join(lines) + "\n")
