"""gpu.pcie and gpu.nvlink, judged after the run: every loaded sample's PCIe link against the
site, the node's baseline or the GPU's maximum (a Grace part's NVLink-C2C links instead), and
NVLink state and error counters as DCGM's health watch judges them (CRC as a rate, replay,
recovery and NVLink-5 errors at one)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ..core.context import Context
from ..core.nvml_read import NVLINK5_FIELDS, NVLINK_COUNTERS
from ..core.registry import check
from . import hardware, skus, topology
from .hardware import NO_LOAD, expectation, field, judge_each, observations, unreadable, who

PCIE_REPLAYS_LIMIT = 80  # DCGM's pcie test: replays tolerated during one run
PCIE_SAMPLES = 1  # loaded samples below the link's rate tolerated (a sample as load begins)
PCIE_FIELDS = ("pcie_gen", "pcie_width", "pcie_max_gen", "pcie_max_width", "pcie_replays")
# DCGM_LIMIT_MAX_NVLINK_CRC_ERROR: "RM has informed us that CRC errors only matter at rates of
# 100+ per second"; below that DCGM warns. Replay and recovery fail at one.
NVLINK_CRC_PER_S = 100.0
NVLINK_CRC = ("crc_flit", "crc_data")
NVLINK_RISE_WARNS = ("recoveries_successful",)
# Every NVLink counter NVML reads (core/nvml_read.py); all but CRC and those above fail at one.
NVLINK_COUNTER_NAMES = (*(name for name, _ in NVLINK_COUNTERS), *NVLINK5_FIELDS.values())
NVLINK_ANY_RISE_FAILS = tuple(
    name for name in NVLINK_COUNTER_NAMES if name not in (*NVLINK_CRC, *NVLINK_RISE_WARNS)
)


@check(
    "gpu.pcie",
    needs_torch=False,
    phase="after",
    reference="every loaded sample's link against the GPU's own maximum generation and width, "
    "the node's baseline, or verify.gpu.pcie_gen/width (DCGM judges in P0 only); at most "
    f"{PCIE_REPLAYS_LIMIT} replays in a run (DCGM's pcie test)",
)
def pcie(ctx: Context) -> str:
    """Catches a PCIe link trained narrower or slower than it can be under load (a loose card,
    a bad riser), one that trains down mid-run, and a link replaying packets during the run."""
    record = observations(ctx)
    limit = int(expectation(ctx, "pcie_replays", PCIE_REPLAYS_LIMIT))

    def judge(snap: Dict[str, Any], index: Any, problems: List[str], notes: List[str]) -> str:
        sku = skus.sku_of(snap)
        if sku is not None and sku.host_link == skus.C2C:
            return _judge_c2c(snap, problems, notes)
        summary, after = record["samples"][index], record["after"][index]
        unread = [
            *unreadable(snap, PCIE_FIELDS),
            *unreadable(summary, ("pcie_gen", "pcie_width", "utilization")),
            *unreadable(after, ("pcie_replays",)),
        ]
        problems += hardware.cannot_read(snap, unread)
        _replays(snap, after, limit, problems, notes)
        why = (snap.get("errors") or {}).get("pcie_width")
        if why:  # not supported (any other reason is a problem above)
            return f"PCIe link not readable ({why})"
        return _judge_loaded_link(ctx, record, snap, problems)

    # Every GPU, by its host link: a Grace part's is NVLink-C2C, the others' PCIe.
    message = judge_each(record["before"], "index", judge, "host link")
    return message or "every link at its width and generation under load"


def _judge_c2c(snap: Dict[str, Any], problems: List[str], notes: List[str]) -> str:
    """A Grace part's host link is NVLink-C2C, not PCIe: every C2C link up."""
    links, why = field(snap, "c2c_links")
    problems += hardware.cannot_read(snap, [f"its {u}" for u in unreadable(snap, ["c2c_links"])])
    if why is not None:
        return f"its NVLink-C2C links not readable ({why})"
    if links["active"] < links["count"] or not links["count"]:
        problems.append(
            f"{who(snap)}: NVLink-C2C host link: {links['active']} of {links['count']} links up"
        )
    else:
        notes.append(
            f"GPU {snap['index']}: host link NVLink-C2C, {links['active']} of "
            f"{links['count']} links up"
        )
    return ""


FASTEST = "the fastest it ran at: its maximum is not readable"


def _expected_link(
    ctx: Context, record: Dict[str, Any], snap: Dict[str, Any]
) -> Tuple[int, int, str]:
    """Generation and width the link should run at under load: the site's, else this node's
    baseline (a board wired narrower than its GPU can go is healthy as it was), else the
    GPU's own maximum, else (a maximum NVML does not give) the fastest it ran at in this run:
    a link that trained down from it is judged, not passed."""
    site_gen, site_width = expectation(ctx, "pcie_gen"), expectation(ctx, "pcie_width")
    base = topology.baseline_gpu(record, snap) or {}
    seen = [snap.get("pcie_gen"), snap.get("pcie_width")]
    for link in record["samples"][snap["index"]].get("pcie_loaded") or {}:
        seen += [int(part) for part in link.split("x")]
    if site_gen or site_width:
        why = "verify.gpu"
    elif base.get("pcie_gen") or base.get("pcie_width"):
        why = "this node's baseline"
    elif snap.get("pcie_max_gen") and snap.get("pcie_max_width"):
        why = "its maximum"
    else:
        why = FASTEST
    fastest = [max((v for v in seen[i::2] if v), default=0) for i in (0, 1)]
    gen = site_gen or base.get("pcie_gen") or snap.get("pcie_max_gen") or fastest[0]
    width = site_width or base.get("pcie_width") or snap.get("pcie_max_width") or fastest[1]
    return int(gen), int(width), why


def _judge_loaded_link(
    ctx: Context, record: Dict[str, Any], snap: Dict[str, Any], problems: List[str]
) -> str:
    """Why the link was not judged ("" when it was)."""
    gpu = snap["index"]
    loaded: Dict[str, int] = record["samples"][gpu].get("pcie_loaded") or {}
    gen, width, why = _expected_link(ctx, record, snap)
    if not loaded:
        return NO_LOAD
    if not (gen or width):
        return "no expected link (its maximum is not readable)"
    tolerance = int(expectation(ctx, "pcie_samples", PCIE_SAMPLES))
    links = {k: tuple(int(part) for part in k.split("x")) for k in loaded}  # "4x16": Gen4 x16
    short = {k: n for k, n in loaded.items() if (gen and links[k][0] < gen) or links[k][1] < width}
    # The figures judged: the worst link once the tolerated samples are set aside.
    ranked = sorted(links[k] for k, n in loaded.items() for _ in range(n))
    worst_gen = min(g for g, _ in ranked[min(tolerance, len(ranked) - 1) :])
    ranked_width = sorted(w for _, w in ranked)
    worst_width = ranked_width[min(tolerance, len(ranked_width) - 1)]
    if width:
        ctx.metric(
            f"pcie_width.gpu{gpu}", float(worst_width), "lanes", peak=float(width), threshold=1.0
        )
    if gen:
        ctx.metric(f"pcie_gen.gpu{gpu}", float(worst_gen), "gen", peak=float(gen), threshold=1.0)
    if sum(short.values()) > tolerance:
        seen = ", ".join(f"Gen{k.replace('x', ' x')} in {n}" for k, n in sorted(short.items()))
        problems.append(
            f"{who(snap)}: PCIe link below Gen{gen} x{width} ({why}) under load: {seen} of "
            f"{sum(loaded.values())} loaded samples"
        )
    elif why == FASTEST:  # held to nothing but itself: not judged against what it can do
        return f"no expected link (its maximum is not readable; none below Gen{gen} x{width})"
    return ""


def _replays(
    before: Dict[str, Any], after: Dict[str, Any], limit: int, problems: List[str], notes: List[str]
) -> None:
    first, why = field(before, "pcie_replays")
    last, later = field(after, "pcie_replays")
    if first is None or last is None:  # unreadable ones are the caller's problems
        notes.append(f"GPU {before['index']}: PCIe replays not counted ({why or later})")
        return
    rose = rise(int(first), int(last))
    went = f" ({reset('the counter', first, last)})" if int(last) < int(first) else ""
    if rose > limit:
        problems.append(
            f"{who(before)}: {rose} PCIe replays during the run (at most {limit}){went}"
        )
    elif went:
        notes.append(f"GPU {before['index']}: PCIe replays{went}")


def rise(first: int, last: int) -> int:
    """How far a counter rose during the run: a counter that went back was reset (a driver
    reload, a GPU reset) and counted again from zero, so at least its last value."""
    return last - first if last >= first else last


def reset(name: str, first: Any, last: Any) -> str:
    return f"{name} went back from {first} to {last} during the run (reset): counted from zero"


@check(
    "gpu.nvlink",
    needs_torch=False,
    phase="after",
    reference="active links against verify.gpu.nvlinks, else the node's baseline, else the "
    "SKU's fixed count (suite/skus.py); CRC as a rate (fail at 100/s, warn below), replay, "
    "recovery and NVLink-5 error counters at one (DCGM's NVLink health watch)",
)
def nvlink(ctx: Context) -> str:
    """Catches NVLinks down (fewer active than the site, the baseline or the board says), a
    link NVML cannot read, and links whose error counters rose during the run: CRC errors at a
    rate that matters, any replay, recovery or NVLink-5 error."""
    record = observations(ctx)
    seconds = max(float(record.get("seconds") or 0.0), 1e-3)

    def judge(
        snap: Dict[str, Any], links: Any, problems: List[str], notes: List[str]
    ) -> Optional[str]:
        # The counters are read twice, before the run and after it: either unread hides a rise.
        after, why = field(record["after"][snap["index"]], "nvlinks")
        unread = [f"its links after the run ({why})"] if why else []
        unread += [
            f"link {link['link']} {u}"
            for link in [*links, *(after or [])]
            for u in unreadable(link, link.get("errors") or {})
        ]
        problems += hardware.cannot_read(snap, list(dict.fromkeys(unread))[:6])
        unjudged = _judge_link_count(ctx, record, snap, links, problems, notes)
        _judge_counters(ctx, snap, links, after or [], seconds, problems, notes)
        return unjudged

    message = judge_each(record["before"], "nvlinks", judge, "NVLink")
    return message or "every NVLink up, no error counter rose"


def _judge_link_count(
    ctx: Context,
    record: Dict[str, Any],
    snap: Dict[str, Any],
    links: List[Dict[str, Any]],
    problems: List[str],
    notes: List[str],
) -> Optional[str]:
    """Judges the count of active links; why nothing of the GPU's links was judged, or None."""
    gpu = snap["index"]
    active = sum(1 for link in links if link.get("active"))
    if snap.get("mig"):
        # DCGM (bug 200682374): NVML reports a MIG GPU's links Down; they are not judged. With
        # none active, no counter was read either: the GPU was not judged at all.
        if not active:
            return "MIG mode: link state not judged, as DCGM does"
        notes.append(f"GPU {gpu}: MIG mode: link state not judged, as DCGM does")
        return None
    configured = expectation(ctx, "nvlinks")
    base = (topology.baseline_gpu(record, snap) or {}).get("nvlinks_active")
    sku = skus.sku_of(snap)
    if configured is not None:
        wanted, why = int(configured), "verify.gpu.nvlinks"
    elif base is not None:
        recorded = record["baseline"].get("recorded_at", "?")
        wanted, why = int(base), f"this node's baseline of {recorded}"
    elif sku is not None and sku.nvlinks is not None and not sku.varies:
        wanted, why = sku.nvlinks[0], f"a healthy {sku.name}"
    elif sku is not None and sku.nvlinks is not None and active not in sku.nvlinks:
        counts = " or ".join(str(n) for n in sorted(sku.nvlinks, reverse=True))
        ctx.metric(f"nvlinks_active.gpu{gpu}", float(active), "links")
        problems.append(f"{who(snap)}: {active} NVLinks active, a healthy {sku.name} has {counts}")
        return None
    else:
        ctx.metric(f"nvlinks_active.gpu{gpu}", float(active), "links")
        product = sku.name if sku else str(snap.get("name"))
        notes.append(
            f"warn: GPU {gpu}: {active} NVLinks active; a {product}'s count depends on its "
            "bridge or topology and this node has no baseline yet (a healthy run records one; "
            "verify.gpu.nvlinks pins it)"
        )
        return None
    ctx.metric(f"nvlinks_active.gpu{gpu}", float(active), "links", minimum=float(wanted))
    if active != wanted and (configured is not None or active < wanted or base is None):
        problems.append(f"{who(snap)}: {active} NVLinks active, expected {wanted} ({why})")
    return None


def _judge_counters(
    ctx: Context,
    snap: Dict[str, Any],
    links: List[Dict[str, Any]],
    after: List[Dict[str, Any]],
    seconds: float,
    problems: List[str],
    notes: List[str],
) -> None:
    gpu = snap["index"]
    tolerance = int(expectation(ctx, "nvlink_errors", 0))
    resets: List[str] = []
    rose = _nvlink_rises(links, after, resets)
    failed = len(problems)
    crc = {k: v for k, v in rose.items() if k.split()[-1] in NVLINK_CRC}
    hard = {k: v for k, v in rose.items() if k.split()[-1] in NVLINK_ANY_RISE_FAILS}
    soft = {k: v for k, v in rose.items() if k.split()[-1] in NVLINK_RISE_WARNS}
    rate = sum(crc.values()) / seconds
    ctx.metric(f"nvlink_crc_per_s.gpu{gpu}", rate, "errors/s", maximum=NVLINK_CRC_PER_S)
    ctx.metric(
        f"nvlink_errors.gpu{gpu}", float(sum(hard.values())), "count", maximum=float(tolerance)
    )
    listed = ", ".join(f"{k} +{v}" for k, v in sorted(crc.items()))
    if rate >= NVLINK_CRC_PER_S:
        problems.append(
            f"{who(snap)}: NVLink CRC errors at {rate:.0f}/s "
            f"(fail at {NVLINK_CRC_PER_S:.0f}/s): {listed}"
        )
    elif crc:
        notes.append(
            f"warn: GPU {gpu}: NVLink CRC errors at {rate:.1f}/s, "
            f"under {NVLINK_CRC_PER_S:.0f}/s: {listed}"
        )
    if sum(hard.values()) > tolerance:
        listed = ", ".join(f"{k} +{v}" for k, v in sorted(hard.items()))
        problems.append(f"{who(snap)}: NVLink error counters rose during the run: {listed}")
    if soft:
        listed = ", ".join(f"{k} +{v}" for k, v in sorted(soft.items()))
        notes.append(f"warn: GPU {gpu}: NVLink recovered itself: {listed}")
    if resets and len(problems) > failed:  # said with the failure it explains
        problems[-1] += f" ({'; '.join(resets)})"
    elif resets:
        notes.append(f"GPU {gpu}: {'; '.join(resets)}")


def _nvlink_rises(
    before: List[Dict[str, Any]], links: List[Dict[str, Any]], notes: List[str]
) -> Dict[str, int]:
    after = {link["link"]: link for link in links}
    rose: Dict[str, int] = {}
    for link in before:
        later = after.get(link["link"], {})
        for name in NVLINK_COUNTER_NAMES:
            first, last = link.get(name), later.get(name)
            if first is None or last is None:
                continue
            if last < first:
                notes.append(reset(f"link {link['link']} {name}", first, last))
            if rise(int(first), int(last)):
                rose[f"link {link['link']} {name}"] = rise(int(first), int(last))
    return rose
