"""Samples written as Prometheus reads them: the text exposition format 0.0.4 (what
node_exporter's textfile collector and every Prometheus accept) or OpenMetrics 1.0 (asked for by
a scraper's Accept header or --openmetrics). Label values are escaped as both formats define
(backslash, double quote, newline); families come in the catalogue's order, each with its HELP
and TYPE once, and a series is written once (the first sample of a label set wins)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from envkit.metrics.catalogue import FAMILIES, Family

TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
LABEL_VALUE_LIMIT = 256  # a target's or member's name, cut: no label carries free text


@dataclass(frozen=True)
class Sample:
    family: Family
    labels: tuple[tuple[str, str], ...]
    value: float


def sample(family: Family, value: float, **labels: object) -> Sample:
    """A sample of FAMILY; labels whose value is None are left out (an absent label and an empty
    one are the same series to Prometheus), and every label must be one the family declares."""
    if unknown := set(labels) - set(family.labels):
        raise ValueError(f"{family.name} has no label {sorted(unknown)}")
    kept = tuple(
        (name, str(labels[name])[:LABEL_VALUE_LIMIT])
        for name in family.labels
        if labels.get(name) is not None
    )
    return Sample(family, kept, float(value))


def escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def render(samples: Iterable[Sample], openmetrics: bool = False) -> str:
    by_family: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for one in samples:  # a series' first sample is kept
        by_family.setdefault(one.family.name, {}).setdefault(one.labels, one.value)
    lines: list[str] = []
    for family in FAMILIES:
        written = by_family.get(family.name)
        if not written:
            continue
        help_text = family.help.replace("\\", "\\\\").replace("\n", "\\n")  # \\ and newline only
        lines += [f"# HELP {family.name} {help_text}", f"# TYPE {family.name} gauge"]
        for labels, value in written.items():
            inside = ",".join(f'{name}="{escape_label(text)}"' for name, text in labels)
            braced = f"{{{inside}}}" if inside else ""
            lines.append(f"{family.name}{braced} {_number(value)}")
    if openmetrics:
        lines.append("# EOF")
    return "\n".join(lines) + "\n" if lines else ("# EOF\n" if openmetrics else "")
