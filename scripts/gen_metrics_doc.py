"""Write docs/metrics.md: `envkit metrics`' families and alert rules, from the metric catalogue
(envkit/metrics/catalogue.py) and the rules (envkit/metrics/rules.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from envkit.metrics.catalogue import FAMILIES
from envkit.metrics.rules import alerts

HEAD = """# Metrics: where operators look

Generated from `envkit/metrics` by `scripts/gen_metrics_doc.py`.

`envkit metrics` exports what envkit knows in Prometheus' text exposition (OpenMetrics 1.0 when
a scraper asks for it, or with `--openmetrics`):

- the **latest run of every target** in the history store (`envkit verify`, `envkit health`,
  cluster merges): the run, each check's status and duration, every figure with its fraction of
  the published peak and, for the bench group's per-GPU figures, of the node's other GPUs;
- the **GPU hardware counters that run read**: under dcgm-exporter's names and labels where the
  meaning is the same (`DCGM_FI_DEV_*`, `gpu`, `UUID`, `pci_bus_id`, `Hostname`; the product is
  `model_name`, as dcgm-exporter's camelCase `modelName` fails promtool's lint), so a
  dashboard or alert written for dcgm-exporter reads them as they are, and under `envkit_gpu_*`
  where envkit measures something else (a maximum during the run, not a current reading);
- **each gpu.* check's verdict per GPU** (`envkit_gpu_check_status`): a failing check's status
  on the GPUs its problems name (every gpu.* problem names its GPU, as the drain reason does),
  pass on the others, so "GPU 5 fails gpu.ecc" is a series an alert fires on; a failure that
  names no GPU (fewer GPUs than expected) stays the check's own (`envkit_check_status`);
- **the Slurm job and user on each GPU** (below): every GPU series of the runs made on this
  machine carries `hpc_job` and `hpc_user`;
- **each member container** of the project whose envkit.yaml is found (`--config`,
  `ENVKIT_CONFIG`, `./envkit.yaml`): state, GPUs given, GPU memory, utilisation and processes
  per GPU, SSH sessions, notebook kernels, idle seconds: what `envkit status --json` has.

Three ways out:

{ways}
Every family is a gauge: a value is the state at the latest run or reading. Labels are bounded:
target, check, figure and member names, GPU indices and identities, closed sets of statuses and
states; never run ids or messages. A source that cannot be read gives no series of its own
(`envkit_metrics_source_up{source} 0`, and why on stderr): an old value is never presented as
fresh.

## The Slurm job and user on each GPU

envkit reads the job on each GPU as dcgm-exporter's HPC job mapping does
(`internal/pkg/transformation/hpc.go`): `--hpc-job-mapping-dir DIR`, else
`$DCGM_HPC_JOB_MAPPING_DIR` (dcgm-exporter's own variable, so a node set up for it needs nothing
more), names a folder with a file per GPU, named by its index (`2.0`, a MIG instance, counts for
GPU 2), holding the ids of the jobs on it, one a line. Each GPU series of the runs made on this
machine is repeated once per job on its GPU with `hpc_job` (dcgm-exporter's label), and
`hpc_user`, the job's user from `squeue -h -j IDS -o "%A %u"` (one call per reading, only while
jobs run; absent where squeue cannot answer). A missing folder is no job yet; one that cannot be
read marks the history source down, with why. The labels are the jobs on the GPU at the reading,
as dcgm-exporter's are, beside the verdict of the GPU's latest run: the alert names whose job
runs on a GPU that fails.

The site's Slurm `Prolog` and `Epilog` (run as root on the node, with `SLURM_JOB_ID` and
`SLURM_JOB_GPUS` set: Slurm's Prolog and Epilog Guide) keep the folder:

```sh
# Prolog
mkdir -p /run/dcgm-job-map
for gpu in $(echo "$SLURM_JOB_GPUS" | tr , ' '); do
  echo "$SLURM_JOB_ID" >> /run/dcgm-job-map/$gpu
done
# Epilog
for gpu in $(echo "$SLURM_JOB_GPUS" | tr , ' '); do
  sed -i "/^$SLURM_JOB_ID$/d" /run/dcgm-job-map/$gpu
done
```

"""


WAYS = (
    ("`envkit metrics`", "a look, a pipe", "prints once; exit 1 when a source could not be read"),
    (
        "`envkit metrics --textfile DIR`",
        "node_exporter's textfile collector (a Slurm node, a host with node_exporter already)",
        "writes `DIR/envkit.prom` atomically (a temporary name, then a rename); run it from a "
        "timer after each health run",
    ),
    (
        "`envkit metrics --serve ADDR`",
        "Prometheus scraping envkit directly",
        "loopback unless an address is named (no authentication); each source is read every "
        "`--interval` s by a thread of its own, a scrape answers at once from the latest "
        "readings, and a source with no reading for 3 intervals + 30 s is exported as down",
    ),
)


def _ways() -> str:
    rows = ["| way | for | notes |", "| --- | --- | --- |"]
    rows += [f"| {way} | {use} | {notes} |" for way, use, notes in WAYS]
    return "\n".join(rows) + "\n"


def _families() -> str:
    rows = ["## Families\n", "| name | labels | meaning | from | dcgm-exporter |",
            "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for family in FAMILIES:
        labels = ", ".join(f"`{label}`" for label in family.labels)
        same = "same name and meaning" if family.dcgm else ""
        rows.append(f"| `{family.name}` | {labels} | {family.help} | {family.source} | {same} |")
    return "\n".join(rows) + "\n"


def _rules() -> str:
    rows = [
        "\n## Alert rules\n",
        "`envkit metrics --rules [--stale-hours N]` prints them as a Prometheus rules file;",
        "`tests/unit/test_metrics_rules.py` runs promtool's unit tests on each, with series that",
        "must fire it and series that must not. `envkit metrics --dashboard` prints a Grafana",
        "dashboard (import it and pick the Prometheus data source) with a panel per family.\n",
        "| alert | severity | expression |",
        "| --- | --- | --- |",
    ]
    for alert in alerts():
        expr = alert.expr.replace("|", "\\|")
        rows.append(f"| `{alert.name}` | {alert.severity} | `{expr}` |")
    return "\n".join(rows) + "\n"


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/metrics.md")
    out.write_text(HEAD.replace("{ways}", _ways()) + _families() + _rules())


if __name__ == "__main__":
    main()
