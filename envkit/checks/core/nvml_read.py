"""Reading a GPU through NVML (core/nvml.py's session): every field the gpu checks judge, as
one plain JSON-able dict per GPU (a snapshot) or per moment (a sample). A field NVML cannot give
is absent from the values and named in `errors` with NVML's reason: "not_supported" is a skip
for the check that wanted it; anything else ("gpu_is_lost", "unknown") is itself a finding.
Python 3.8 syntax: old images run this."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List

from .nvml import (
    INSUFFICIENT_SIZE,
    NOT_SUPPORTED,
    VERSION_MISMATCH,
    Nvml,
    NvmlError,
    _PciInfo,
    _ProcessInfo,
    field,
    field_values,
)

MAX_NVLINKS = 36  # NVML_NVLINK_MAX_LINKS from CUDA 13.3 (18 before); past a GPU's last link
# NVML answers invalid_argument, so the count comes from NVML_FI_DEV_NVLINK_LINK_COUNT first
NVIDIA_VENDOR = 0x10DE
# NVML field ids (nvml.h, CUDA 13.3) the checks read through nvmlDeviceGetFieldValues
FI_MEMORY_TEMP = 82  # HBM temperature, C
FI_NVLINK_LINK_COUNT = 91
FI_C2C_LINK_COUNT, FI_C2C_LINK_STATUS = 170, 171
FI_GPU_RECOVERY_ACTION = 230  # None / GPU reset / node reboot / drain P2P / drain and reset
# NVLink-5 error counters (Blackwell; the legacy per-link counters are deprecated there), per
# link (scopeId): DCGM's health watch fails on any rise of these (MonitorNVLink5Fields), and
# warns on a successful link recovery (213).
NVLINK5_FIELDS = {
    206: "malformed_packets",
    207: "buffer_overruns",
    208: "rx_errors",
    209: "rx_remote_errors",
    210: "rx_general_errors",
    211: "local_link_integrity_errors",
    212: "tx_discards",
    213: "recoveries_successful",
    214: "recoveries_failed",
    215: "recovery_events",
    219: "effective_errors",
    221: "symbol_errors",
}
ECC_COUNTERS = (
    ("volatile_uncorrected", 1, 0),
    ("volatile_corrected", 0, 0),
    ("aggregate_corrected", 0, 1),
    ("aggregate_uncorrected", 1, 1),
)  # (name, memory error type, counter type)
NVLINK_COUNTERS = (("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3))
# nvmlTemperatureThresholds_t, in NVML's order (0-3)
TEMPERATURE_THRESHOLDS = ("shutdown_temp", "slowdown_temp", "memory_max_temp", "gpu_max_temp")


class Reading:
    """Collects fields into a snapshot: a value, or the reason NVML gave instead."""

    def __init__(self, **keys: Any) -> None:
        self.values: Dict[str, Any] = {**keys, "errors": {}}

    def take(self, name: str, read: Callable[[], Any]) -> Any:
        try:
            self.values[name] = read()
        except NvmlError as exc:
            self.values["errors"][name] = exc.name
        return self.values.get(name)


def _reader(nvml: Nvml, function: str, handle: Any, *codes: int) -> Callable[[], int]:
    """A reading of one value by `function` with integer arguments (a counter, a sensor);
    the ECC and NVLink error counters are 64-bit."""
    args = [ctypes.c_int(code) for code in codes]
    if function in ("nvmlDeviceGetTotalEccErrors", "nvmlDeviceGetNvLinkErrorCounter"):
        return lambda: nvml.ull(function, handle, *args)
    return lambda: nvml.uint(function, handle, *args)


def identity(nvml: Nvml, handle: Any, reading: Reading) -> None:
    reading.take("name", lambda: nvml.text("nvmlDeviceGetName", handle))
    reading.take("uuid", lambda: nvml.text("nvmlDeviceGetUUID", handle))
    reading.take("vbios", lambda: nvml.text("nvmlDeviceGetVbiosVersion", handle))
    if reading.take("pci", lambda: pci_info(nvml, handle)):
        reading.values.update(reading.values.pop("pci"))
    elif "pci" in reading.values["errors"]:
        reading.values["errors"]["bus_id"] = reading.values["errors"].pop("pci")
    reading.take("brand", lambda: nvml.uint("nvmlDeviceGetBrand", handle))
    reading.take("architecture", lambda: nvml.uint("nvmlDeviceGetArchitecture", handle))
    reading.take("mig", lambda: nvml.uints("nvmlDeviceGetMigMode", handle, 2)[0] == 1)
    reading.take("persistence", lambda: nvml.uint("nvmlDeviceGetPersistenceMode", handle) == 1)
    reading.take("inforom", lambda: _inforom(nvml, handle))


def _inforom(nvml: Nvml, handle: Any) -> str:
    nvml.call("nvmlDeviceValidateInforom", handle)  # corrupted_inforom raises
    return "ok"


def pci_info(nvml: Nvml, handle: Any) -> Dict[str, Any]:
    """The bus id, and the product's PCI device id (the upper half of pciDeviceId, whose lower
    half is NVIDIA's vendor id): the SKU table's key (suite/skus.py)."""
    info = _PciInfo()
    nvml.call("nvmlDeviceGetPciInfo_v3", handle, ctypes.byref(info))
    found: Dict[str, Any] = {"bus_id": str(info.busId.decode("ascii", "replace"))}
    if info.pciDeviceId & 0xFFFF == NVIDIA_VENDOR:
        found["pci_device_id"] = int(info.pciDeviceId) >> 16
    return found


def _memory_health(nvml: Nvml, handle: Any, reading: Reading) -> None:
    if reading.take("ecc_mode", lambda: nvml.uints("nvmlDeviceGetEccMode", handle, 2)[0] == 1):
        for name, kind, counter in ECC_COUNTERS:
            reading.take(
                f"ecc_{name}", _reader(nvml, "nvmlDeviceGetTotalEccErrors", handle, kind, counter)
            )
    reading.take("remapped_rows", lambda: _remapped_rows(nvml, handle))
    reading.take("retired_pages", lambda: _retired_pages(nvml, handle))
    reading.take("unrepairable_memory", lambda: _unrepairable(nvml, handle))
    reading.take("sram_threshold_exceeded", lambda: _sram_threshold(nvml, handle))
    reading.take("recovery_action", lambda: field(nvml, handle, FI_GPU_RECOVERY_ACTION))


def _unrepairable(nvml: Nvml, handle: Any) -> bool:
    """nvmlDeviceGetUnrepairableMemoryFlag_v1 (Hopper on). nvml.h gives its struct as the flag
    alone; DCGM's copy puts a version word first. Both are read: the word set to the version
    stays when the driver takes DCGM's layout (the flag follows), and is overwritten by the
    flag when it takes nvml.h's."""
    version = 0x01000008
    words = (ctypes.c_uint * 2)(version, 0)
    nvml.call("nvmlDeviceGetUnrepairableMemoryFlag_v1", handle, words)
    return bool(words[1] if words[0] == version else words[0])


def _sram_threshold(nvml: Nvml, handle: Any) -> bool:
    """nvmlEccSramErrorStatus_v1_t.bThresholdExceeded (104 bytes, version 0x01000068, the flag
    at byte 96): the SRAM error threshold of NVIDIA's field diagnostic was passed."""
    raw = (ctypes.c_ubyte * 104)()
    ctypes.memmove(raw, ctypes.byref(ctypes.c_uint(0x01000068)), 4)
    nvml.call("nvmlDeviceGetSramEccErrorStatus", handle, raw)
    return bool(ctypes.c_uint.from_buffer(raw, 96).value)


def _remapped_rows(nvml: Nvml, handle: Any) -> Dict[str, int]:
    names = ("corrected", "uncorrected", "pending", "failed")
    return dict(zip(names, nvml.uints("nvmlDeviceGetRemappedRows", handle, 4)))


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
    counts["pending"] = nvml.uint("nvmlDeviceGetRetiredPagesPendingStatus", handle)
    return counts


def _links(nvml: Nvml, handle: Any, reading: Reading) -> None:
    reading.take("pcie_gen", lambda: nvml.uint("nvmlDeviceGetCurrPcieLinkGeneration", handle))
    reading.take("pcie_width", lambda: nvml.uint("nvmlDeviceGetCurrPcieLinkWidth", handle))
    reading.take("pcie_max_gen", lambda: nvml.uint("nvmlDeviceGetMaxPcieLinkGeneration", handle))
    reading.take("pcie_max_width", lambda: nvml.uint("nvmlDeviceGetMaxPcieLinkWidth", handle))
    reading.take("pcie_replays", lambda: nvml.uint("nvmlDeviceGetPcieReplayCounter", handle))
    reading.take("nvlinks", lambda: _nvlinks(nvml, handle))
    reading.take("fabric", lambda: _fabric(nvml, handle))
    reading.take("c2c_links", lambda: _c2c(nvml, handle))


def _link_count(nvml: Nvml, handle: Any) -> int:
    """How many NVLinks the GPU has: NVML's own count where the driver gives it, else every
    index NVML answers for (it answers invalid_argument past the last)."""
    try:
        return int(field(nvml, handle, FI_NVLINK_LINK_COUNT))
    except NvmlError:
        return MAX_NVLINKS


def _nvlinks(nvml: Nvml, handle: Any) -> List[Dict[str, Any]]:
    """Every link NVML answers for. The first link's answer decides whether NVLink exists at
    all (not_supported raises). Each counter's reason is kept where it has no value: a
    counter the link does not keep (not_supported) is left out of the judgement, any other
    reason is itself a finding."""
    links = []
    for link in range(_link_count(nvml, handle)):
        try:
            active = nvml.uint("nvmlDeviceGetNvLinkState", handle, ctypes.c_uint(link)) == 1
        except NvmlError as exc:
            if link == 0:
                raise
            if exc.code in (2, NOT_SUPPORTED):
                break
            links.append({"link": link, "active": None, "errors": {"state": exc.name}})
            continue
        row = Reading(link=link, active=active)
        if active:
            _link_counters(nvml, handle, link, row)
        links.append(row.values)
    return links


def _link_counters(nvml: Nvml, handle: Any, link: int, row: Reading) -> None:
    try:
        row.values["version"] = nvml.uint("nvmlDeviceGetNvLinkVersion", handle, ctypes.c_uint(link))
    except NvmlError:
        row.values["version"] = None
    for name, counter in NVLINK_COUNTERS:
        row.take(name, _reader(nvml, "nvmlDeviceGetNvLinkErrorCounter", handle, link, counter))
    try:
        fields = field_values(nvml, handle, [(f, link) for f in NVLINK5_FIELDS])
    except NvmlError as exc:
        fields = {(f, link): exc.name for f in NVLINK5_FIELDS}
    for (field_id, _), value in fields.items():
        name = NVLINK5_FIELDS[field_id]
        if isinstance(value, str):
            row.values["errors"][name] = value
        else:
            row.values[name] = int(value)


def _fabric(nvml: Nvml, handle: Any) -> Dict[str, int]:
    """State and status of the GPU's fabric registration, and the fabric manager's health mask
    where the driver gives one (nvmlGpuFabricInfoV: v3, else v2, else the legacy call)."""
    for version, size in ((0x03000028, 40), (0x02000024, 36)):
        raw = (ctypes.c_ubyte * size)()
        ctypes.memmove(raw, ctypes.byref(ctypes.c_uint(version)), 4)
        try:
            nvml.call("nvmlDeviceGetGpuFabricInfoV", handle, raw)
        except NvmlError as exc:
            if exc.code in (VERSION_MISMATCH, 13):
                continue
            raise
        return {
            "state": int(raw[28]),
            "status": int(ctypes.c_int.from_buffer(raw, 20).value),
            "health_mask": int(ctypes.c_uint.from_buffer(raw, 32).value),
        }
    # nvmlGpuFabricInfo_t: a 16-byte cluster UUID, status, clique id, then `state`: one byte in
    # nvml.h (an unsigned int in some bindings): 40 bytes keep either layout readable on
    # little-endian hosts.
    raw = (ctypes.c_ubyte * 40)()
    nvml.call("nvmlDeviceGetGpuFabricInfo", handle, raw)
    return {"state": int(raw[24]), "status": int(ctypes.c_int.from_buffer(raw, 16).value)}


def _c2c(nvml: Nvml, handle: Any) -> Dict[str, int]:
    """Grace parts: NVLink-C2C links to the CPU, and how many are up."""
    count = int(field(nvml, handle, FI_C2C_LINK_COUNT))
    up = sum(1 for link in range(count) if int(field(nvml, handle, FI_C2C_LINK_STATUS, link)) == 1)
    return {"count": count, "active": up}


def _thermal(nvml: Nvml, handle: Any, reading: Reading) -> None:
    reading.take("temperature", _reader(nvml, "nvmlDeviceGetTemperature", handle, 0))
    for kind, name in enumerate(TEMPERATURE_THRESHOLDS):
        reading.take(name, _reader(nvml, "nvmlDeviceGetTemperatureThreshold", handle, kind))
    reading.take("memory_temperature", lambda: _memory_temperature(nvml, handle))
    reading.take("power_w", lambda: nvml.uint("nvmlDeviceGetPowerUsage", handle) / 1000.0)
    reading.take(
        "power_limit_w", lambda: nvml.uint("nvmlDeviceGetEnforcedPowerLimit", handle) / 1000.0
    )
    reading.take("sm_clock", _reader(nvml, "nvmlDeviceGetClockInfo", handle, 1))
    reading.take("max_sm_clock", _reader(nvml, "nvmlDeviceGetMaxClockInfo", handle, 1))


def _memory_temperature(nvml: Nvml, handle: Any) -> int:
    """HBM temperature (NVML_FI_DEV_MEMORY_TEMP). Read as an unsigned int whatever type the
    entry claims, as DCGM does (r545 called it a double); above 200 C is no reading."""
    value = field(nvml, handle, FI_MEMORY_TEMP)
    celsius = int(value) & 0xFFFFFFFF if not isinstance(value, float) else int(value)
    if celsius > 200:
        raise NvmlError(999, "memory temperature out of range")
    return celsius


def _reasons(nvml: Nvml, handle: Any) -> int:
    try:
        return nvml.ull("nvmlDeviceGetCurrentClocksEventReasons", handle)
    except NvmlError as exc:
        if exc.code != 13:  # the function exists from r535; older drivers call it "throttle"
            raise
        return nvml.ull("nvmlDeviceGetCurrentClocksThrottleReasons", handle)


def utilization(nvml: Nvml, handle: Any) -> int:
    rates = (ctypes.c_uint * 2)()  # nvmlUtilization_t: gpu, memory
    nvml.call("nvmlDeviceGetUtilizationRates", handle, rates)
    return int(rates[0])


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


class NvmlGpus(Nvml):
    """An NVML session that reads snapshots and samples: the source the gpu checks and the
    watch use (core/smi.py's `open_gpus`)."""

    def snapshot(self, index: int) -> Dict[str, Any]:
        """Everything the gpu checks judge, for one GPU."""
        if index in self.lost:
            return {"index": index, "errors": {"handle": self.lost[index]}}
        handle, reading = self.handles[index], Reading(index=index)
        identity(self, handle, reading)
        _memory_health(self, handle, reading)
        _links(self, handle, reading)
        _thermal(self, handle, reading)
        reading.take("processes", lambda: processes(self, handle))
        return reading.values

    def sample(self, index: int) -> Dict[str, Any]:
        """What changes from moment to moment, read often while the suite loads the GPU."""
        if index in self.lost:
            return {"index": index, "errors": {"handle": self.lost[index]}}
        handle, reading = self.handles[index], Reading(index=index)
        _thermal(self, handle, reading)
        reading.take("reasons", lambda: _reasons(self, handle))
        reading.take("utilization", lambda: utilization(self, handle))
        reading.take("pcie_gen", lambda: self.uint("nvmlDeviceGetCurrPcieLinkGeneration", handle))
        reading.take("pcie_width", lambda: self.uint("nvmlDeviceGetCurrPcieLinkWidth", handle))
        return reading.values
