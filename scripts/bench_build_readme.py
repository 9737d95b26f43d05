"""Print the benchmarks/README.md section for benchmarks/build.json."""

from __future__ import annotations

import json
from pathlib import Path

data = json.loads(
    (Path(__file__).resolve().parent.parent / "benchmarks" / "build.json").read_text()
)
cold = data["cold_build_s"]
print("| one-line change | rebuild | layers rebuilt | first rebuilt step |")
print("| --- | --- | --- | --- |")
for label, row in data["changes"].items():
    first = (row["first_rebuilt_step"] or "—").split("  ")[0][:60]
    print(
        f"| {label} | {row['seconds']:.1f} s ({row['seconds'] / cold:.0%} of cold) | "
        f"{row['layers_rebuilt']} | `{first}` |"
    )
size = data["image_mb"]
print(
    f"\nCold build (--no-cache): {cold:.0f} s. Image: {size['envkit']} MB "
    f"({size['envkit_added']} MB over the {size['base']} MB base) vs the seed-000-style "
    f"Dockerfile's {size['seed_equivalent']} MB ({size['seed_added']} MB over the base)."
)
