"""What the GPUs did while the suite ran, seen from the suite's parent process (standard
library and ctypes only): NVML's XID events, a sample of clock-event reasons, PCIe link,
temperature and power every SAMPLE_S, and every counter before the first check and after the
last. The gpu.* checks of the "after" phase judge the result (checks/suite/gpu.py).

The watch never costs a verdict: anything it cannot do is written down as the reason, and the
checks that needed it skip with that reason."""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional

from ..core import kernel_log
from ..core.node_state import NodeState
from ..core.nvml import NvmlError, Unavailable, XidListener, reason_names
from ..core.smi import open_gpus

SAMPLE_S = 0.2
LOADED_UTILIZATION = 50  # % busy: the benches and the burn-in keep a GPU far above this
# The GPU's limits, as the last sample that had them says
LIMITS = ("slowdown_temp", "shutdown_temp", "gpu_max_temp", "memory_max_temp", "power_limit_w")


class GpuSummary:
    """The samples of one GPU, folded as they come."""

    def __init__(self) -> None:
        self.samples = 0
        self.loaded = 0
        # throttling is judged under load only: "a+b" -> loaded samples with just those reasons
        self.loaded_reason_sets: Dict[str, int] = {}
        self.values: Dict[str, Any] = {}
        self.errors: Dict[str, str] = {}  # each field's first reason for having no value
        self.lost: Optional[Dict[str, Any]] = None  # when NVML first answered gpu_is_lost
        self.pcie_loaded: Dict[str, int] = {}  # "GEN x WIDTH" -> loaded samples at it

    def add(self, sample: Dict[str, Any], at_s: float = 0.0, check: str = "") -> None:
        self.samples += 1
        for name, why in (sample.get("errors") or {}).items():
            self.errors.setdefault(name, why)
            if why == "gpu_is_lost" and self.lost is None:
                self.lost = {"at_s": at_s, "check": check or "start-up", "field": name}
        loaded = (sample.get("utilization") or 0) >= LOADED_UTILIZATION
        self.loaded += loaded
        for name in ("temperature", "memory_temperature", "power_w"):  # the run's highest
            if sample.get(name) is not None:
                top = self.values.get(f"max_{name}", sample[name])
                self.values[f"max_{name}"] = max(top, sample[name])
        self.values.update({key: sample[key] for key in LIMITS if sample.get(key) is not None})
        if loaded:
            # a sample with two reasons is one slowed sample
            together = "+".join(reason_names(int(sample.get("reasons") or 0)))
            self.loaded_reason_sets[together] = self.loaded_reason_sets.get(together, 0) + 1
            # Every loaded sample's link, so one that trains down mid-run is seen (the best
            # generation alone would hide it); width counts only under load (DCGM: P0 only).
            if sample.get("pcie_gen") is not None and sample.get("pcie_width") is not None:
                link = f"{sample['pcie_gen']}x{sample['pcie_width']}"
                self.pcie_loaded[link] = self.pcie_loaded.get(link, 0) + 1
            self.values["end_temperature"] = sample.get("temperature")

    def as_dict(self) -> Dict[str, Any]:
        return {
            "samples": self.samples,
            "loaded": self.loaded,
            "interval_s": SAMPLE_S,
            "loaded_reason_sets": self.loaded_reason_sets,
            "errors": self.errors,
            "lost": self.lost,
            "pcie_loaded": self.pcie_loaded,
            **self.values,
        }


class Watch:
    def __init__(self, source: Any) -> None:
        self.source = source
        self.started = time.time()
        self.current = ""  # the check now running: XID events are attributed to it
        self.stopping = threading.Event()
        self.summaries = [GpuSummary() for _ in range(source.count)]
        self.xids: List[Dict[str, Any]] = []
        self.problems: List[str] = []
        self.state = NodeState()
        self.driver = source.driver() if hasattr(source, "driver") else None
        self.before = self._snapshots()
        self.listener: Optional[XidListener] = None
        self.xid_refused: Dict[int, str] = {}  # GPUs NVML will not give events of, and why
        self.listener_note = f"{source.backend} gives no XID events"
        if source.backend == "nvml":
            try:
                self.listener = XidListener(source)
                self.xid_refused = dict(self.listener.refused)
                refused = ", ".join(f"GPU {i}: {why}" for i, why in self.listener.refused.items())
                if not self.listener.watched:
                    self.listener_note = f"NVML gives no XID events here ({refused})"
                    self.listener.close()
                    self.listener = None
                else:
                    self.listener_note = "nvml" + (f" (not on {refused})" if refused else "")
            except NvmlError as exc:
                self.listener_note = f"NVML events unavailable: {exc.name}"
        self.thread = threading.Thread(target=self._loop, name="envkit-gpu-watch", daemon=True)
        self.thread.start()

    @classmethod
    def start(cls) -> Dict[str, Any] | Watch:
        """A running watch, or the observations of one that cannot run (with the reason)."""
        try:
            return cls(open_gpus())
        except Unavailable as exc:
            return {"available": False, "why": str(exc)}

    def mark(self, check_id: str) -> None:
        self.current = check_id

    def _snapshots(self) -> List[Dict[str, Any]]:
        return [self.source.snapshot(index) for index in range(self.source.count)]

    def _loop(self) -> None:
        while not self.stopping.is_set():
            try:
                self._listen()
                at_s, check = self._elapsed(), self.current
                for index, summary in enumerate(self.summaries):
                    summary.add(self.source.sample(index), at_s, check)
            except Exception as exc:  # a broken reading ends the watch, never the run
                self.problems.append(f"{type(exc).__name__}: {exc}")
                return

    def _listen(self) -> None:
        if self.listener is None:
            self.stopping.wait(SAMPLE_S)
            return
        deadline = time.monotonic() + SAMPLE_S
        while time.monotonic() < deadline and not self.stopping.is_set():
            event = self.listener.wait(max(1, int((deadline - time.monotonic()) * 1000)))
            if event is not None:
                gpu, xid = event
                self.xids.append(
                    {"gpu": gpu, "xid": xid, "check": self.current, "at_s": self._elapsed()}
                )

    def _kernel_window(self) -> Dict[str, Any]:
        """The kernel log's XID lines in this run's window (from the previous run's cursor,
        else the last 2 h), the cursor the next run starts from, and the last driver load."""
        records, why = kernel_log.read_records()
        if why:
            return {"readable": False, "why": why, "events": []}
        first, how = kernel_log.window(records, self.state.cursor)
        lines, loaded = kernel_log.nvidia_lines(records, first)
        last = records[-1].seq if records else first - 1
        return {
            "readable": True,
            "window": how,
            "events": lines,
            "driver_loaded_seq": loaded.get("*"),
            "cursor": {"boot_id": kernel_log.boot_id(), "seq": max(last, first - 1)},
        }

    def _elapsed(self) -> float:
        return round(time.time() - self.started, 3)

    def stop(self) -> Dict[str, Any]:
        self.stopping.set()
        self.thread.join(5 + SAMPLE_S * 2)
        observations: Dict[str, Any] = {
            "available": True,
            "backend": self.source.backend,
            "driver": self.driver,
            "seconds": self._elapsed(),
            "before": self.before,
            "after": self._snapshots(),
            "samples": [summary.as_dict() for summary in self.summaries],
            "xids": self.xids,
            "xid_listener": self.listener_note,
            "xid_refused": self.xid_refused,
            "kernel": self._kernel_window(),
            "baseline": self.state.baseline,
            "node_state": {"path": self.state.path, "note": self.state.note},
            "problems": self.problems,
        }
        if self.listener is not None:
            self.listener.close()
        self.source.close()
        return observations
