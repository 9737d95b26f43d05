"""NVML through ctypes on libnvidia-ml.so.1, the library the NVIDIA container toolkit mounts into
every GPU container, with the standard library alone (so the bundle still needs only Python and
torch): the session (init, handles, a call that raises NVML's reason), field values, XID events.
What is read of each GPU is core/nvml_read.py's. Python 3.8 syntax: old images run this."""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar

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
VERSION_MISMATCH = 25  # NVML_ERROR_ARGUMENT_VERSION_MISMATCH: the struct version is not this one


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


class _FieldValue(ctypes.Structure):
    # nvmlFieldValue_t (40 bytes): the value union read as its widest member
    _fields_ = [
        ("fieldId", ctypes.c_uint),
        ("scopeId", ctypes.c_uint),
        ("timestamp", ctypes.c_longlong),
        ("latencyUsec", ctypes.c_longlong),
        ("valueType", ctypes.c_int),
        ("nvmlReturn", ctypes.c_int),
        ("value", ctypes.c_ulonglong),
    ]


class _EventData(ctypes.Structure):
    _fields_ = [
        ("device", ctypes.c_void_p),
        ("eventType", ctypes.c_ulonglong),
        ("eventData", ctypes.c_ulonglong),
        ("gpuInstanceId", ctypes.c_uint),
        ("computeInstanceId", ctypes.c_uint),
    ]


N = TypeVar("N", bound="Nvml")


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
    def open(cls: Type[N]) -> N:
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

    def uint(self, function: str, handle: Any, *args: Any, kind: Any = ctypes.c_uint) -> int:
        value = kind(0)
        self.call(function, handle, *args, ctypes.byref(value))
        return int(value.value)

    def ull(self, function: str, handle: Any, *args: Any) -> int:
        return self.uint(function, handle, *args, kind=ctypes.c_ulonglong)

    def uints(self, function: str, handle: Any, count: int) -> List[int]:
        """The COUNT unsigned ints FUNCTION writes (a mode and its pending one, remapped rows)."""
        values = [ctypes.c_uint(0) for _ in range(count)]
        self.call(function, handle, *(ctypes.byref(value) for value in values))
        return [int(value.value) for value in values]

    def text(self, function: str, *handle: Any) -> str:
        buffer = ctypes.create_string_buffer(96)
        self.call(function, *handle, buffer, ctypes.c_uint(96))
        return buffer.value.decode("utf-8", "replace")

    def driver(self) -> Optional[str]:
        try:
            return self.text("nvmlSystemGetDriverVersion")  # the system's: no device handle
        except NvmlError:
            return None


def field_values(
    nvml: Nvml, handle: Any, wanted: List[Tuple[int, int]]
) -> Dict[Tuple[int, int], Any]:
    """(field id, scope id) -> its value, or NVML's reason (a str) for that one entry. The
    call itself succeeds when any entry was filled; each entry carries its own return code."""
    if not wanted:
        return {}
    values = (_FieldValue * len(wanted))()
    for entry, (field, scope) in zip(values, wanted):
        entry.fieldId, entry.scopeId = field, scope
    nvml.call("nvmlDeviceGetFieldValues", handle, ctypes.c_int(len(wanted)), values)
    found: Dict[Tuple[int, int], Any] = {}
    for entry, key in zip(values, wanted):
        if entry.nvmlReturn != SUCCESS:
            found[key] = ERROR_NAMES.get(entry.nvmlReturn, f"error {entry.nvmlReturn}")
        elif entry.valueType == 0:  # double
            found[key] = ctypes.cast(
                ctypes.pointer(ctypes.c_ulonglong(entry.value)), ctypes.POINTER(ctypes.c_double)
            ).contents.value
        elif entry.valueType in (4, 5):  # signed
            found[key] = ctypes.c_longlong(entry.value).value
        elif entry.valueType in (1, 6):  # unsigned int, short: the low word
            found[key] = int(entry.value & 0xFFFFFFFF)
        else:
            found[key] = int(entry.value)
    return found


def field(nvml: Nvml, handle: Any, field_id: int, scope: int = 0) -> Any:
    """One field's value; NvmlError with NVML's reason where it has none."""
    value = field_values(nvml, handle, [(field_id, scope)])[(field_id, scope)]
    if isinstance(value, str):
        code = next((c for c, n in ERROR_NAMES.items() if n == value), 999)
        raise NvmlError(code, f"nvmlDeviceGetFieldValues({field_id})")
    return value


class XidListener:
    """NVML's XID events for every GPU (nvmlEventTypeXidCriticalError)."""

    def __init__(self, nvml: Nvml) -> None:
        self.nvml = nvml
        self.set = ctypes.c_void_p()
        nvml.call("nvmlEventSetCreate", ctypes.byref(self.set))
        self.watched: List[int] = []
        self.refused: Dict[int, str] = {}
        for index, handle in enumerate(nvml.handles):
            if index in nvml.lost:  # watched by nothing: named, not passed over
                self.refused[index] = "gpu_is_lost"
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
