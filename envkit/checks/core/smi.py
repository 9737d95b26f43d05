"""The GPUs' own state from the best source this target has (`open_gpus`): NVML through its
library (core/nvml_read.py), else the fallback here, where libnvidia-ml.so.1 cannot be loaded but
nvidia-smi runs: the same snapshot fields, read through `nvidia-smi --query-gpu`. It cannot see
NVLink, the NVSwitch fabric, the InfoROM, temperature limits or XID events: those fields are
marked "nvml_only", and the checks that need them skip saying so (never pass)."""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .nvml import Unavailable
from .nvml_read import NvmlGpus

NVML_ONLY = ("nvlinks", "fabric", "inforom", "slowdown_temp", "shutdown_temp", "gpu_max_temp")
TIMEOUT_S = 20


def _enabled(text: str) -> bool:
    return text.strip().lower() in ("enabled", "yes", "1")


# (nvidia-smi field, snapshot field, how to read it); a "group.part" snapshot field is one part
# of a compound value (remapped_rows, retired_pages).
FIELDS: List[Tuple[str, str, Callable[[str], Any]]] = [
    ("name", "name", str),
    ("uuid", "uuid", str),
    ("pci.bus_id", "bus_id", str),
    ("vbios_version", "vbios", str),
    ("persistence_mode", "persistence", _enabled),
    ("mig.mode.current", "mig", _enabled),
    ("ecc.mode.current", "ecc_mode", _enabled),
    ("ecc.errors.corrected.volatile.total", "ecc_volatile_corrected", int),
    ("ecc.errors.uncorrected.volatile.total", "ecc_volatile_uncorrected", int),
    ("ecc.errors.corrected.aggregate.total", "ecc_aggregate_corrected", int),
    ("ecc.errors.uncorrected.aggregate.total", "ecc_aggregate_uncorrected", int),
    ("remapped_rows.correctable", "remapped_rows.corrected", int),
    ("remapped_rows.uncorrectable", "remapped_rows.uncorrected", int),
    ("remapped_rows.pending", "remapped_rows.pending", lambda t: int(_enabled(t))),
    ("remapped_rows.failure", "remapped_rows.failed", lambda t: int(_enabled(t))),
    ("retired_pages.single_bit_ecc.count", "retired_pages.sbe", int),
    ("retired_pages.double_bit.count", "retired_pages.dbe", int),
    ("retired_pages.pending", "retired_pages.pending", lambda t: int(_enabled(t))),
    ("clocks_event_reasons.active", "reasons", lambda t: int(t, 16)),
    ("pcie.link.gen.current", "pcie_gen", int),
    ("pcie.link.gen.max", "pcie_max_gen", int),
    ("pcie.link.width.current", "pcie_width", int),
    ("pcie.link.width.max", "pcie_max_width", int),
    ("temperature.gpu", "temperature", int),
    ("power.draw", "power_w", float),
    ("enforced.power.limit", "power_limit_w", float),
    ("clocks.sm", "sm_clock", int),
    ("clocks.max.sm", "max_sm_clock", int),
    ("utilization.gpu", "utilization", int),
]
INVALID_FIELD = re.compile(r'Field "([^"]+)" is not a valid field to query')


def _reason(text: str) -> Optional[str]:
    """NVML's reason for a cell nvidia-smi could not fill, or None for a value."""
    cell = text.strip().lower()
    if cell in ("[n/a]", "n/a", "[not supported]", "not supported"):
        return "not_supported"
    if cell.startswith("[") and cell.endswith("]"):
        return cell.strip("[]").replace(" ", "_")  # [GPU is lost], [Unknown Error], ...
    return None


class Smi:
    backend = "nvidia-smi"

    def __init__(self, program: str) -> None:
        self.program = program
        self.fields = list(FIELDS)
        self.unknown: List[str] = []
        self.apps: Optional[str] = None  # this round's process list, every GPU's
        self.rows = self._query()

    @classmethod
    def open(cls) -> Smi:
        program = shutil.which("nvidia-smi")
        if program is None:
            raise Unavailable("nvidia-smi is not on the PATH either")
        return cls(program)

    def _run(self, args: List[str]) -> str:
        try:
            done = subprocess.run(
                [self.program, *args], capture_output=True, text=True, timeout=TIMEOUT_S
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"nvidia-smi did not answer: {exc}") from None
        if done.returncode != 0:
            raise Unavailable(f"nvidia-smi failed: {(done.stdout + done.stderr).strip()[:200]}")
        return done.stdout

    def _query(self) -> List[List[str]]:
        """One row of cells per GPU; fields this nvidia-smi does not know are dropped."""
        while True:
            names = ",".join(field for field, _, _ in self.fields)
            try:
                text = self._run([f"--query-gpu={names}", "--format=csv,noheader,nounits"])
            except Unavailable as exc:
                bad = INVALID_FIELD.search(str(exc))
                if not bad:
                    raise
                self.unknown.append(bad.group(1))
                self.fields = [f for f in self.fields if f[0] != bad.group(1)]
                continue
            return [[c.strip() for c in line.split(",")] for line in text.splitlines() if line]

    @property
    def count(self) -> int:
        return len(self.rows)

    def driver(self) -> Optional[str]:
        try:
            text = self._run(["--query-gpu=driver_version", "--format=csv,noheader"])
        except Unavailable:
            return None
        lines = text.split()
        return lines[0] if lines else None

    def snapshot(self, index: int) -> Dict[str, Any]:
        # One nvidia-smi run answers for every GPU: a round (GPU 0, 1, ...) asks it once, not
        # once per GPU (two runs a GPU every 0.2 s of the watch on an eight-GPU node).
        if index == 0 or not self.rows:
            self.rows, self.apps = self._query(), None
        values: Dict[str, Any] = {"index": index, "errors": {n: "nvml_only" for n in NVML_ONLY}}
        for cell, (_, name, read) in zip(self.rows[index], self.fields):
            self._fill(values, name, cell, read)
        for field in self.unknown:  # an older nvidia-smi: that field is not supported here
            name = next(n for f, n, _ in FIELDS if f == field)
            values["errors"].setdefault(name.split(".")[0], "not_supported")
        try:
            values["processes"] = self._processes(values.get("bus_id"))
        except Unavailable:  # not listed is not "no process": gpu.processes fails on it
            values["errors"]["processes"] = "unknown"
        return values

    def _fill(
        self, values: Dict[str, Any], name: str, cell: str, read: Callable[[str], Any]
    ) -> None:
        group, _, part = name.partition(".")
        if (why := _reason(cell)) is not None:
            values["errors"][group] = why
            values.pop(group, None)
            return
        if values["errors"].get(group):
            return  # another part of this compound value is missing
        try:
            value = read(cell)
        except ValueError:
            values["errors"][group] = "unknown"
            return
        if part:
            values.setdefault(group, {})[part] = value
        else:
            values[group] = value

    sample = snapshot  # one query reads every field: a sample is a snapshot

    def _processes(self, bus_id: Optional[str]) -> List[Dict[str, int]]:
        query = ["--query-compute-apps=pid,used_memory,gpu_bus_id", "--format=csv,noheader,nounits"]
        text = self.apps = self._run(query) if self.apps is None else self.apps
        found = []
        for line in text.splitlines():
            cells = [c.strip() for c in line.split(",")]
            if len(cells) == 3 and cells[2] == bus_id and cells[0].isdigit():
                used = int(cells[1]) if cells[1].isdigit() else 0
                found.append({"pid": int(cells[0]), "used_bytes": used * 1024 * 1024})
        return found

    def close(self) -> None:
        """Nothing is held open between nvidia-smi runs."""


def open_gpus() -> Union[NvmlGpus, Smi]:
    """The GPUs' own state from the best source this target has: NVML through its library, else
    nvidia-smi (fewer fields; checks that need the rest skip saying why). An open source (close
    it when done), or Unavailable naming what is missing."""
    try:
        return NvmlGpus.open()
    except Unavailable as library:
        try:
            return Smi.open()
        except Unavailable as smi:
            raise Unavailable(f"{library}; {smi}") from None
