"""Write envkit/checks/suite/xid_catalogue.json from NVIDIA's XID catalogue, as extracted into
scripts/data/ (xid_catalogue.json: every XID's mnemonic and resolution bucket;
xid_144_150_decode.json: the NVLink-5 decode sheet), and docs/gpu-health.md's tables from the
data the checks judge by: the XID table and the SKU table (suite/skus.py).

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

    def number(value: float | None) -> str:
        return f"{value:,.0f}" if value else "—"

    lines = [
        SKU_BEGIN,
        "",
        "| product | PCI device ids | healthy NVLinks | host link | memory GB/s (peak) | "
        "DCGM floor GB/s | bf16 TFLOP/s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for sku in SKUS:
        links = (
            "by the node's baseline"
            if sku.nvlinks is None
            else " or ".join(str(n) for n in sku.nvlinks)
            + (" (warned until a baseline exists)" if sku.varies else "")
        )
        ids = ", ".join(f"0x{d:04X}" for d in sku.device_ids)
        recalled = " (recalled)" if sku.recalled else ""
        lines.append(
            f"| {sku.name} | {ids} | {links} | {sku.host_link} | {number(sku.memory_gbs)} | "
            f"{number(sku.dcgm_min_memory_gbs)} | {number(sku.bf16)}{recalled} |"
        )
    lines += ["", SKU_END]
    return "\n".join(lines)


def _between(text: str, begin: str, end: str, table: str) -> str:
    if begin in text:
        return text.split(begin)[0] + table + text.split(end, 1)[1]
    return text.rstrip("\n") + "\n\n" + table + "\n"


def with_table(text: str) -> str:
    if BEGIN not in text:
        text = text.rstrip("\n") + "\n\n## The XID table\n\n" + BEGIN + END + "\n"
    text = _between(text, BEGIN, END, doc_table())
    return _between(text, SKU_BEGIN, SKU_END, sku_table())


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
