"""Write docs/checks.md, the check catalogue, from the registry's ids and docstrings."""

from __future__ import annotations

import sys
from pathlib import Path

from envkit.checks.core.registry import CHECKS
from envkit.checks.suite import GROUPS, load
from envkit.verify import agreement

HEAD = """# Check catalogue

Generated from `envkit/checks` by `scripts/gen_checks_doc.py`. Ids are a contract: they stay
stable. Statuses: `pass`; `fail` (the breakage is there, or a required capability is missing);
`skip` (does not apply here, with the reason); `error` (the check itself broke, crashed or timed
out). `bench.*` runs only with `--bench` (the default of `envkit verify`) on a GPU; thresholds in
`verify.thresholds` are minimum fractions of the GPU's published peak (each bench has a default,
so every figure is judged). `gpu.*` reads the GPU hardware's own state through NVML; the checks
marked *after* judge what was seen during the whole run ([GPU health](gpu-health.md)).
`stress.*` runs only with `verify --stress DURATION`. The reference column says what each result
is compared with: never the op under test itself (a float64 product as the reference for a
float32 one would agree with a BLAS broken for every dtype).

"""
APPENDED = """## added by the cluster merges

| id | when | catches | reference |
| --- | --- | --- | --- |
| `multigpu.cross_node` | `verify --slurm` on 2+ nodes | {cross} | {cross_ref} |
| `{agreement}` | `verify --slurm` and `k8s merge`, 2+ nodes | {agreement_doc} | {agreement_ref} |
"""


def main() -> None:
    load()
    lines = [HEAD]
    for group in GROUPS:
        lines.append(
            f"## {group}\n\n| id | timeout | catches | reference |\n| --- | --- | --- | --- |"
        )
        for spec in CHECKS.values():
            if spec.group == group:
                doc = " ".join(spec.doc.split())
                when = f"{spec.timeout_s:.0f} s" + (", after" if spec.phase == "after" else "")
                lines.append(f"| `{spec.id}` | {when} | {doc} | {spec.reference} |")
        lines.append("")
    lines.append(
        APPENDED.format(
            cross="one all-reduce and DDP steps across every node of the job, bus bandwidth",
            cross_ref="the exact all-reduce sum; every rank's weights",
            agreement=agreement.CHECK_ID,
            agreement_doc=" ".join((agreement.__doc__ or "").split()),
            agreement_ref=agreement.REFERENCE,
        )
    )
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/checks.md")
    target.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
