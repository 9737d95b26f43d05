"""Write envkit/checks/suite/xid_catalogue.json from NVIDIA's XID catalogue, as extracted into
scripts/data/ (xid_catalogue.json: every XID's mnemonic and resolution bucket;
xid_144_150_decode.json: the NVLink-5 decode sheet), and docs/gpu-health.md's tables from the
data the checks judge by: the XID table, the SKU table and each SKU's floors (suite/skus.json
and the benches' default thresholds).

    python scripts/gen_xid_table.py [--check]

--check exits 1 when either file differs from what it would write (the test runs it)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "scripts" / "data"
MODULE = REPO / "envkit" / "checks" / "suite" / "xid_catalogue.json"
DOC = REPO / "docs" / "gpu-health.md"
BEGIN, END = "<!-- xid table: begin (scripts/gen_xid_table.py) -->", "<!-- xid table: end -->"
SKU_BEGIN = "<!-- sku table: begin (scripts/gen_xid_table.py) -->"
SKU_END = "<!-- sku table: end -->"
FLOORS_BEGIN = "<!-- floors table: begin (scripts/gen_xid_table.py) -->"
FLOORS_END = "<!-- floors table: end -->"


def _load() -> tuple[dict, dict]:  # type: ignore[type-arg]
    catalogue = json.loads((DATA / "xid_catalogue.json").read_text())
    decode = json.loads((DATA / "xid_144_150_decode.json").read_text())
    return catalogue, decode


def module_text() -> str:
    catalogue, decode = _load()
    source = catalogue["source"]
    xids = {
        int(row["xid"]): (row["mnemonic"], row["resolution"], row["description"])
        for row in catalogue["xids"]
    }
    for row in catalogue.get("driver_only_not_in_catalogue", {}).get("xids", []):
        xids.setdefault(int(row["xid"]), (row["mnemonic"], "unknown", row["description"]))
    rows = tuple(
        (
            int(r["xid"]), r["subcode"], r["intrinfo_mask_v1_lt_R575"],
            r["intrinfo_mask_v2_ge_R575"],
            tuple(int(v, 16) for v in r["error_status_hex"].split("/"))
            if r["error_status_hex"] else (),
            r["resolution_immediate"], r["action2_mask_v1"], r["action2_mask_v2"],
            r["action2"], r["severity"],
        )
        for r in decode["rows"]
    )  # fmt: skip
    data = {
        "source": source["url"],
        "source_sha256": source["sha256"],
        "workbook": f"{source['repo']} {source['path']} @ {source['commit']}",
        "xids": {str(xid): list(row) for xid, row in sorted(xids.items())},
        "nvlink5_decode": [[*row[:4], list(row[4]), *row[5:]] for row in rows],
    }
    # one entry a line: a catalogue change is a one-line diff
    body = ",\n".join(
        f"  {json.dumps(key)}: "
        + (_lines(value) if isinstance(value, (dict, list)) else json.dumps(value))
        for key, value in data.items()
    )
    return "{\n" + body + "\n}\n"


def _lines(value: dict | list) -> str:  # type: ignore[type-arg]
    if isinstance(value, dict):
        items = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n  }"
    return "[\n" + ",\n".join(f"    {json.dumps(v)}" for v in value) + "\n  ]"


def doc_table() -> str:
    from envkit.checks.suite.xid_rules import BUCKET_VERDICTS, verdict_of_bucket

    catalogue, _ = _load()
    lines = [
        BEGIN,
        "",
        f"Generated from NVIDIA's catalogue ({catalogue['source']['url']}, workbook sha256 "
        f"`{catalogue['source']['sha256'][:16]}…`). Verdict: **fail** drains a node; **warn** is "
        "recorded and reported and fails nothing.",
        "",
        "| XID | mnemonic | catalogue bucket | envkit | description |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in catalogue["xids"]:
        verdict = verdict_of_bucket(row["resolution"], int(row["xid"]))
        lines.append(
            f"| {row['xid']} | `{row['mnemonic']}` | {row['resolution']} | {verdict} | "
            f"{row['description'].replace('|', '/')} |"
        )
    lines += ["", "| bucket | envkit |", "| --- | --- |"]
    lines += [f"| {bucket} | {verdict} |" for bucket, verdict in sorted(BUCKET_VERDICTS.items())]
    lines += ["", END]
    return "\n".join(lines)


def sku_table() -> str:
    from envkit.checks.suite.skus import SKUS

    lines = [
        SKU_BEGIN,
        "",
        "| product | PCI device ids | healthy NVLinks | host link |",
        "| --- | --- | --- | --- |",
    ]
    for sku in SKUS:
        links = (
            "by the node's baseline"
            if sku.nvlinks is None
            else " or ".join(str(n) for n in sku.nvlinks)
            + (" (warned until a baseline exists)" if sku.varies else "")
        )
        ids = ", ".join(f"0x{d:04X}" for d in sku.device_ids)
        lines.append(f"| {sku.name} | {ids} | {links} | {sku.host_link} |")
    lines += ["", SKU_END]
    return "\n".join(lines)


def floors_table() -> str:
    """Each SKU's published figures and the floor the benches judge them by: the figure times
    the check's default threshold (verify.thresholds overrides it per site)."""
    from envkit.checks.core.contract import DEFAULT_THRESHOLDS
    from envkit.checks.suite.skus import FIGURES, SKUS

    checks = {"memory_gbs": "bench.memory_bandwidth"}
    checks.update({d: f"bench.matmul_{d}" for d in ("bf16", "fp16", "tf32", "fp32")})

    def cell(value: float | None, figure: str) -> str:
        fraction = DEFAULT_THRESHOLDS.get(checks.get(figure, ""))
        if not value:
            return "—"
        return f"{value:,g} → {value * fraction:,.0f}" if fraction else f"{value:,g}"

    fractions = ", ".join(f"{f} {DEFAULT_THRESHOLDS[c]:g}" for f, c in checks.items())
    lines = [
        FLOORS_BEGIN,
        "",
        f"Published → floor. Floors are fractions of the published figure ({fractions}); no "
        "check measures fp8 yet, so its figure has no floor.",
        "",
        "| product | bf16 | fp16 | tf32 | fp32 | fp8 (TFLOP/s, dense) | memory GB/s | source |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for sku in SKUS:
        cells = " | ".join(cell(getattr(sku, figure), figure) for figure in FIGURES)
        source = sku.source or "none"
        recalled = " (recalled)" if sku.recalled else ""
        why = f"; not published: {sku.unpublished}" if sku.unpublished else ""
        lines.append(f"| {sku.name} | {cells} | {source}{recalled}{why} |")
    lines += ["", FLOORS_END]
    return "\n".join(lines)


def _between(text: str, begin: str, end: str, table: str) -> str:
    if begin in text:
        return text.split(begin)[0] + table + text.split(end, 1)[1]
    return text.rstrip("\n") + "\n\n" + table + "\n"


def with_table(text: str) -> str:
    if BEGIN not in text:
        text = text.rstrip("\n") + "\n\n## The XID table\n\n" + BEGIN + END + "\n"
    text = _between(text, BEGIN, END, doc_table())
    text = _between(text, SKU_BEGIN, SKU_END, sku_table())
    return _between(text, FLOORS_BEGIN, FLOORS_END, floors_table())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    wanted_module = module_text()
    if args.check:
        stale = MODULE.read_text() != wanted_module
        if not stale:
            stale = DOC.read_text() != with_table(DOC.read_text())
        if stale:
            print("run `python scripts/gen_xid_table.py`", file=sys.stderr)
        return 1 if stale else 0
    MODULE.write_text(wanted_module)
    DOC.write_text(with_table(DOC.read_text()))
    print(f"wrote {MODULE.relative_to(REPO)} and the table in {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
