"""Write docs/checks.md, the check catalogue, from the registry's ids and docstrings."""

from __future__ import annotations

import sys
from pathlib import Path

from envkit.checks.registry import CHECKS, GROUPS
from envkit.checks.runner import _load_all

HEAD = """# Check catalogue

Generated from `envkit/checks` by `scripts/gen_checks_doc.py`. Ids are a contract: they stay
stable. Statuses: `pass`; `fail` (the breakage is there, or a required capability is missing);
`skip` (does not apply here, with the reason); `error` (the check itself broke, crashed or timed
out). `bench.*` runs only with `--bench` (the default of `envkit verify`) on a GPU; thresholds in
`verify.thresholds` are minimum fractions of the GPU's published peak. The reference column says
what each result is compared with: never the op under test itself (a float64 product as the
reference for a float32 one would agree with a BLAS broken for every dtype).

"""


def main() -> None:
    _load_all()
    lines = [HEAD]
    for group in GROUPS:
        lines.append(
            f"## {group}\n\n| id | timeout | catches | reference |\n| --- | --- | --- | --- |"
        )
        for spec in CHECKS.values():
            if spec.group == group:
                doc = " ".join(spec.doc.split())
                lines.append(f"| `{spec.id}` | {spec.timeout_s:.0f} s | {doc} | {spec.reference} |")
        lines.append("")
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/checks.md")
    target.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
