"""NVML through ctypes on libnvidia-ml.so.1, the library the NVIDIA container toolkit mounts into
every GPU container: the GPU hardware's own state, read with the standard library alone (so the
bundle still needs only Python and torch). Python 3.8 syntax: old images run this.

Every reading is a plain JSON-able dict (a "snapshot"), so the parent process can keep what it
saw during a run in a file the checks read. A field NVML cannot give is absent from the values
and named in `errors` with NVML's reason: "not_supported" is a skip for the check that wanted
it; anything else ("gpu_is_lost", "no_permission") is itself a finding."""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any, Callable, Dict, List, Optional, Tuple

LIBRARY = "libnvidia-ml.so.1"
SUCCESS, NOT_SUPPORTED, INSUFFICIENT_SIZE, TIMEOUT = 0, 3, 7, 10
ERROR_NAMES = {
    1: "uninitialized",
    2: "invalid_argument",
    3: "not_supported",
    4: "no_permission",
    5: "already_initialized",
    6: "not_found",
    7: "insufficient_size",
    8: "insufficient_power",
    9: "driver_not_loaded",
    10: "timeout",
    11: "irq_issue",
    12: "library_not_found",
    13: "function_not_found",
    14: "corrupted_inforom",
    15: "gpu_is_lost",
    16: "reset_required",
    17: "operating_system",
    18: "lib_rm_version_mismatch",
    19: "in_use",
    20: "memory",
    21: "no_data",
    999: "unknown",
}
# nvmlClocksEventReason* bits (clocks-event, formerly "throttle", reasons)
REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
    0x100: "display_clocks",
}
XID_EVENT = 0x8  # nvmlEventTypeXidCriticalError
MAX_NVLINKS = 18  # NVML_NVLINK_MAX_LINKS on Hopper; later GPUs answer invalid_argument past theirs
ECC_COUNTERS = (
    ("volatile_corrected", 0, 0),
    ("volatile_uncorrected", 1, 0),
    ("aggregate_corrected", 0, 1),
    ("aggregate_uncorrected", 1, 1),
)  # (name, memory error type, counter type)
NVLINK_COUNTERS = (("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3))


class NvmlError(Exception):
    def __init__(self, code: int, function: str) -> None:
        self.code = code
        self.name = ERROR_NAMES.get(code, f"error {code}")
        super().__init__(f"{function}: {self.name}")


class Unavailable(Exception):
    """NVML cannot be used here at all; the message says why (and what is missing)."""


class _PciInfo(ctypes.Structure):
    _fields_ = [
        ("busIdLegacy", ctypes.c_char * 16),
        ("domain", ctypes.c_uint),
        ("bus", ctypes.c_uint),
        ("device", ctypes.c_uint),
        ("pciDeviceId", ctypes.c_uint),
        ("pciSubSystemId", ctypes.c_uint),
        ("busId", ctypes.c_char * 32),
    ]


class _ProcessInfo(ctypes.Structure):
    _fields_ = [
        ("pid", ctypes.c_uint),
        ("usedGpuMemory", ctypes.c_ulonglong),
        ("gpuInstanceId", ctypes.c_uint),
        ("computeInstanceId", ctypes.c_uint),
    ]


class _FabricInfo(ctypes.Structure):
    # nvmlGpuFabricInfo_t; `state` is one byte in nvml.h (an unsigned int in some bindings):
    # the padding keeps either layout readable on little-endian hosts.
    _fields_ = [
        ("clusterUuid", ctypes.c_ubyte * 16),
        ("status", ctypes.c_int),
        ("cliqueId", ctypes.c_uint),
        ("state", ctypes.c_ubyte),
        ("_pad", ctypes.c_ubyte * 15),
    ]


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _EventData(ctypes.Structure):
    _fields_ = [
        ("device", ctypes.c_void_p),
        ("eventType", ctypes.c_ulonglong),
        ("eventData", ctypes.c_ulonglong),
        ("gpuInstanceId", ctypes.c_uint),
        ("computeInstanceId", ctypes.c_uint),
    ]


class Nvml:
    """An initialised NVML: handles by index and the calls the checks make."""

    backend = "nvml"

    def __init__(self, library: Any) -> None:
        self.lib = library
        self.handles: List[ctypes.c_void_p] = []
        self.lost: Dict[int, str] = {}  # GPUs NVML counts but cannot reach (gpu_is_lost, ...)
        count = ctypes.c_uint(0)
        self.call("nvmlDeviceGetCount_v2", ctypes.byref(count))
        for index in range(count.value):
            handle = ctypes.c_void_p()
            try:
                self.call(
                    "nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle)
                )
            except NvmlError as exc:
                self.lost[index] = exc.name
            self.handles.append(handle)

    @classmethod
    def open(cls) -> Nvml:
        try:
            library = ctypes.CDLL(LIBRARY)
        except OSError as exc:
            raise Unavailable(
                f"{LIBRARY} cannot be loaded ({exc}); the NVIDIA container toolkit mounts it "
                "into GPU containers (docker run --gpus, or NVIDIA_DRIVER_CAPABILITIES=utility)"
            ) from None
        rc = library.nvmlInit_v2()
        if rc != SUCCESS:
            raise Unavailable(f"nvmlInit failed: {ERROR_NAMES.get(rc, rc)}")
        try:
            return cls(library)
        except NvmlError as exc:
            library.nvmlShutdown()
            raise Unavailable(f"NVML answers but cannot list the GPUs: {exc}") from None

    def close(self) -> None:
        self.lib.nvmlShutdown()

    @property
    def count(self) -> int:
        return len(self.handles)

    def call(self, function: str, *args: Any) -> None:
        try:
            rc = getattr(self.lib, function)(*args)
        except AttributeError:  # an older driver's library lacks the function
            raise NvmlError(13, function) from None
        if rc != SUCCESS:
            raise NvmlError(rc, function)

    def uint(self, function: str, handle: Any, *args: Any) -> int:
        value = ctypes.c_uint(0)
        self.call(function, handle, *args, ctypes.byref(value))
        return int(value.value)

    def ull(self, function: str, handle: Any, *args: Any) -> int:
        value = ctypes.c_ulonglong(0)
        self.call(function, handle, *args, ctypes.byref(value))
        return int(value.value)

    def text(self, function: str, handle: Any) -> str:
        buffer = ctypes.create_string_buffer(96)
        self.call(function, handle, buffer, ctypes.c_uint(96))
        return buffer.value.decode("utf-8", "replace")

    def driver(self) -> Optional[str]:
        buffer = ctypes.create_string_buffer(96)
        try:
            self.call("nvmlSystemGetDriverVersion", buffer, ctypes.c_uint(96))
        except NvmlError:
            return None
        return buffer.value.decode("utf-8", "replace")

    def snapshot(self, index: int) -> Dict[str, Any]:
        return read_snapshot(self, index)

    def sample(self, index: int) -> Dict[str, Any]:
        return read_sample(self, index)


class Reading:
    """Collects fields into a snapshot: a value, or the reason NVML gave instead."""

    def __init__(self, index: int) -> None:
        self.values: Dict[str, Any] = {"index": index, "errors": {}}

    def take(self, name: str, read: Callable[[], Any]) -> Any:
        try:
            self.values[name] = read()
        except NvmlError as exc:
            self.values["errors"][name] = exc.name
        return self.values.get(name)


def _reader(nvml: Nvml, function: str, handle: Any, *codes: int) -> Callable[[], int]:
    """A reading of one value by `function` with integer arguments (a counter, a sensor)."""
    args = [ctypes.c_int(code) for code in codes]
    if function == "nvmlDeviceGetTotalEccErrors":
        return lambda: nvml.ull(function, handle, *args)
    return lambda: nvml.uint(function, handle, *args)


def _identity(nvml: Nvml, handle: Any, reading: Reading) -> None:
    reading.take("name", lambda: nvml.text("nvmlDeviceGetName", handle))
    reading.take("uuid", lambda: nvml.text("nvmlDeviceGetUUID", handle))
    reading.take("vbios", lambda: nvml.text("nvmlDeviceGetVbiosVersion", handle))
    reading.take("bus_id", lambda: _bus_id(nvml, handle))
    reading.take("brand", lambda: nvml.uint("nvmlDeviceGetBrand", handle))
    reading.take("architecture", lambda: nvml.uint("nvmlDeviceGetArchitecture", handle))
    reading.take("mig", lambda: _mig(nvml, handle))
    reading.take("persistence", lambda: nvml.uint("nvmlDeviceGetPersistenceMode", handle) == 1)
    reading.take("inforom", lambda: _inforom(nvml, handle))


def _inforom(nvml: Nvml, handle: Any) -> str:
    nvml.call("nvmlDeviceValidateInforom", handle)  # corrupted_inforom raises
    return "ok"


def _bus_id(nvml: Nvml, handle: Any) -> str:
    info = _PciInfo()
    nvml.call("nvmlDeviceGetPciInfo_v3", handle, ctypes.byref(info))
    return str(info.busId.decode("ascii", "replace"))


def _mig(nvml: Nvml, handle: Any) -> bool:
    current, pending = ctypes.c_uint(0), ctypes.c_uint(0)
    nvml.call("nvmlDeviceGetMigMode", handle, ctypes.byref(current), ctypes.byref(pending))
    return current.value == 1


def _memory_health(nvml: Nvml, handle: Any, reading: Reading) -> None:
    current, pending = ctypes.c_int(0), ctypes.c_int(0)

    def ecc_mode() -> bool:
        nvml.call("nvmlDeviceGetEccMode", handle, ctypes.byref(current), ctypes.byref(pending))
        return current.value == 1

    if reading.take("ecc_mode", ecc_mode):
        for name, kind, counter in ECC_COUNTERS:
            reading.take(
                f"ecc_{name}", _reader(nvml, "nvmlDeviceGetTotalEccErrors", handle, kind, counter)
            )
    reading.take("remapped_rows", lambda: _remapped_rows(nvml, handle))
    reading.take("retired_pages", lambda: _retired_pages(nvml, handle))


def _remapped_rows(nvml: Nvml, handle: Any) -> Dict[str, int]:
    values = [ctypes.c_uint(0) for _ in range(4)]
    nvml.call("nvmlDeviceGetRemappedRows", handle, *(ctypes.byref(v) for v in values))
    corrected, uncorrected, pending, failed = (int(v.value) for v in values)
    return {
        "corrected": corrected,
        "uncorrected": uncorrected,
        "pending": pending,
        "failed": failed,
    }


def _retired_pages(nvml: Nvml, handle: Any) -> Dict[str, int]:
    counts = {}
    for name, cause in (("sbe", 0), ("dbe", 1)):
        count = ctypes.c_uint(0)
        try:
            nvml.call(
                "nvmlDeviceGetRetiredPages", handle, ctypes.c_int(cause), ctypes.byref(count), None
            )
        except NvmlError as exc:
            if exc.code != INSUFFICIENT_SIZE:  # the size query may answer "insufficient"
                raise
        counts[name] = int(count.value)
    pending = ctypes.c_int(0)
    nvml.call("nvmlDeviceGetRetiredPagesPendingStatus", handle, ctypes.byref(pending))
    counts["pending"] = int(pending.value)
    return counts


def _links(nvml: Nvml, handle: Any, reading: Reading) -> None:
    reading.take("pcie_gen", lambda: nvml.uint("nvmlDeviceGetCurrPcieLinkGeneration", handle))
    reading.take("pcie_width", lambda: nvml.uint("nvmlDeviceGetCurrPcieLinkWidth", handle))
    reading.take("pcie_max_gen", lambda: nvml.uint("nvmlDeviceGetMaxPcieLinkGeneration", handle))
    reading.take("pcie_max_width", lambda: nvml.uint("nvmlDeviceGetMaxPcieLinkWidth", handle))
    reading.take("pcie_replays", lambda: nvml.uint("nvmlDeviceGetPcieReplayCounter", handle))
    reading.take("nvlinks", lambda: _nvlinks(nvml, handle))
    reading.take("fabric", lambda: _fabric(nvml, handle))


def _nvlinks(nvml: Nvml, handle: Any) -> List[Dict[str, Any]]:
    """Every link NVML answers for. The first link's answer decides whether NVLink exists at
    all (not_supported raises); past the last link NVML answers invalid_argument."""
    links = []
    for link in range(MAX_NVLINKS):
        try:
            active = nvml.uint("nvmlDeviceGetNvLinkState", handle, ctypes.c_uint(link)) == 1
        except NvmlError as exc:
            if link == 0:
                raise
            if exc.code in (2, NOT_SUPPORTED):
                break
            raise
        row: Dict[str, Any] = {"link": link, "active": active}
        if active:
            try:
                row["version"] = nvml.uint(
                    "nvmlDeviceGetNvLinkVersion", handle, ctypes.c_uint(link)
                )
            except NvmlError:
                row["version"] = None
            for name, counter in NVLINK_COUNTERS:
                try:
                    row[name] = nvml.ull(
                        "nvmlDeviceGetNvLinkErrorCounter",
                        handle,
                        ctypes.c_uint(link),
                        ctypes.c_int(counter),
                    )
                except NvmlError:
                    row[name] = None  # a counter this link does not keep
        links.append(row)
    return links


def _fabric(nvml: Nvml, handle: Any) -> Dict[str, int]:
    info = _FabricInfo()
    nvml.call("nvmlDeviceGetGpuFabricInfo", handle, ctypes.byref(info))
    return {"state": int(info.state), "status": int(info.status)}


def _thermal(nvml: Nvml, handle: Any, reading: Reading) -> None:
    reading.take(
        "temperature", lambda: nvml.uint("nvmlDeviceGetTemperature", handle, ctypes.c_int(0))
    )
    for name, kind in (("shutdown_temp", 0), ("slowdown_temp", 1), ("gpu_max_temp", 3)):
        reading.take(name, _reader(nvml, "nvmlDeviceGetTemperatureThreshold", handle, kind))
    reading.take("power_w", lambda: nvml.uint("nvmlDeviceGetPowerUsage", handle) / 1000.0)
    reading.take(
        "power_limit_w", lambda: nvml.uint("nvmlDeviceGetEnforcedPowerLimit", handle) / 1000.0
    )
    reading.take("sm_clock", lambda: nvml.uint("nvmlDeviceGetClockInfo", handle, ctypes.c_int(1)))
    reading.take(
        "max_sm_clock", lambda: nvml.uint("nvmlDeviceGetMaxClockInfo", handle, ctypes.c_int(1))
    )


def _reasons(nvml: Nvml, handle: Any) -> int:
    try:
        return nvml.ull("nvmlDeviceGetCurrentClocksEventReasons", handle)
    except NvmlError as exc:
        if exc.code != 13:  # the function exists from r535; older drivers call it "throttle"
            raise
        return nvml.ull("nvmlDeviceGetCurrentClocksThrottleReasons", handle)


def utilization(nvml: Nvml, handle: Any) -> int:
    rates = _Utilization()
    nvml.call("nvmlDeviceGetUtilizationRates", handle, ctypes.byref(rates))
    return int(rates.gpu)


def processes(nvml: Nvml, handle: Any) -> List[Dict[str, int]]:
    """Compute processes holding memory on the GPU (host PIDs: other containers' too)."""
    for function in (
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetComputeRunningProcesses_v2",
    ):
        count = ctypes.c_uint(0)
        try:
            nvml.call(function, handle, ctypes.byref(count), None)
        except NvmlError as exc:
            if exc.code == 13:
                continue
            if exc.code != INSUFFICIENT_SIZE:
                raise
        if count.value == 0:
            return []
        infos = (_ProcessInfo * (count.value + 8))()  # room for a few that start meanwhile
        count = ctypes.c_uint(count.value + 8)
        nvml.call(function, handle, ctypes.byref(count), infos)
        return [
            {"pid": int(i.pid), "used_bytes": int(i.usedGpuMemory)} for i in infos[: count.value]
        ]
    raise NvmlError(13, "nvmlDeviceGetComputeRunningProcesses")


def read_snapshot(nvml: Nvml, index: int) -> Dict[str, Any]:
    """Everything the gpu checks judge, for one GPU."""
    if index in nvml.lost:
        return {"index": index, "errors": {"handle": nvml.lost[index]}}
    handle = nvml.handles[index]
    reading = Reading(index)
    _identity(nvml, handle, reading)
    _memory_health(nvml, handle, reading)
    _links(nvml, handle, reading)
    _thermal(nvml, handle, reading)
    reading.take("processes", lambda: processes(nvml, handle))
    return reading.values


def read_sample(nvml: Nvml, index: int) -> Dict[str, Any]:
    """What changes from moment to moment, read often while the suite loads the GPU."""
    if index in nvml.lost:
        return {"index": index, "errors": {"handle": nvml.lost[index]}}
    handle = nvml.handles[index]
    reading = Reading(index)
    _thermal(nvml, handle, reading)
    reading.take("reasons", lambda: _reasons(nvml, handle))
    reading.take("utilization", lambda: utilization(nvml, handle))
    reading.take("pcie_gen", lambda: nvml.uint("nvmlDeviceGetCurrPcieLinkGeneration", handle))
    reading.take("pcie_width", lambda: nvml.uint("nvmlDeviceGetCurrPcieLinkWidth", handle))
    return reading.values


class XidListener:
    """NVML's XID events for every GPU (nvmlEventTypeXidCriticalError)."""

    def __init__(self, nvml: Nvml) -> None:
        self.nvml = nvml
        self.set = ctypes.c_void_p()
        nvml.call("nvmlEventSetCreate", ctypes.byref(self.set))
        self.watched: List[int] = []
        self.refused: Dict[int, str] = {}
        for index, handle in enumerate(nvml.handles):
            if index in nvml.lost:
                continue
            try:
                nvml.call(
                    "nvmlDeviceRegisterEvents", handle, ctypes.c_ulonglong(XID_EVENT), self.set
                )
                self.watched.append(index)
            except NvmlError as exc:
                self.refused[index] = exc.name

    def wait(self, timeout_ms: int) -> Optional[Tuple[int, int]]:
        """(GPU index, XID) of the next event, or None when none came within timeout_ms."""
        data = _EventData()
        try:
            self.nvml.call(
                "nvmlEventSetWait_v2", self.set, ctypes.byref(data), ctypes.c_uint(timeout_ms)
            )
        except NvmlError as exc:
            if exc.code == TIMEOUT:
                return None
            raise
        handles = [h.value for h in self.nvml.handles]
        index = handles.index(data.device) if data.device in handles else -1
        return index, int(data.eventData)

    def close(self) -> None:
        with contextlib.suppress(NvmlError):  # freeing at the end of a run: nothing more to do
            self.nvml.call("nvmlEventSetFree", self.set)


def reason_names(bits: int) -> List[str]:
    return [name for bit, name in sorted(REASONS.items()) if bits & bit]
