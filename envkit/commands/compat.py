"""Output of `envkit compat`: the table, one resolved request, or the mirror presets."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import typer

from envkit.catalog import compat as catalog
from envkit.catalog.mirrors import load_presets
from envkit.config.choices import FLAVORS
from envkit.errors import EnvkitError, FieldError


def show_table(as_json: bool, arch: str | None = None) -> None:
    table = catalog.load_table()
    if arch is not None:
        show_arch_table(table, arch, as_json)
        return
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "table_version": table.table_version,
                    "as_of": table.as_of,
                    "torch": {v: asdict(t) for v, t in table.torch.items()},
                    "cuda": {v: asdict(c) for v, c in table.cuda.items()},
                },
                indent=2,
            )
        )
        return
    from rich.console import Console
    from rich.table import Table

    title = f"envkit compatibility table {table.table_version} (as of {table.as_of})"
    out = Table("torch", "CUDA wheels", "pytorch/pytorch images", "Python", title=title)
    for version in sorted(table.torch, key=catalog.version_key, reverse=True):
        row = table.torch[version]
        images = ", ".join(f"cuda{c}-cudnn{n}" for c, n in row.images.items())
        mark = "" if row.confirmed else " *"
        out.add_row(
            version + mark, ", ".join(row.cuda), images, f"{row.python[0]}-{row.python[-1]}"
        )
    columns = ("CUDA", "min driver", "minor-compat floor", "nvidia/cuda tag")
    drivers = Table(*columns, title="CUDA: minimum driver, nvidia/cuda base")
    for version in sorted(table.cuda, key=catalog.version_key, reverse=True):
        cuda = table.cuda[version]
        tag = (
            f"{cuda.full}-{cuda.cudnn_tag}-runtime-ubuntu{cuda.ubuntu[0]}"
            if cuda.ubuntu and cuda.full
            else "none (no image known)"
        )
        drivers.add_row(version, cuda.min_driver or "not yet known", cuda.family_min_driver, tag)
    console = Console()
    console.print(out)
    console.print("* not yet confirmed against the release's published matrix")
    console.print(drivers)


def _pypi_build(build: str | None) -> str:
    if build is None:
        return "none (PyPI has no wheel for it)"
    return "CPU" if build == "cpu" else f"CUDA {build}"


def show_arch_table(table: catalog.CompatTable, arch: str, as_json: bool) -> None:
    """One architecture's rows: each release's CUDA builds there, what PyPI's wheel is, and
    its pytorch/pytorch images."""
    rows = {v: table.torch[v].on(arch) for v in sorted(table.torch, key=catalog.version_key)}
    if as_json:
        typer.echo(json.dumps({v: asdict(b) for v, b in rows.items()}, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    title = f"torch on linux/{arch} (envkit table {table.table_version})"
    out = Table(
        "torch", "CUDA wheels (download.pytorch.org)", "PyPI's wheel", "images", title=title
    )
    for version, builds in reversed(rows.items()):
        images = ", ".join(f"cuda{c}" for c in builds.images) or "none"
        out.add_row(version, ", ".join(builds.cuda) or "none", _pypi_build(builds.pypi), images)
    Console().print(out)


def show_resolution(request: CompatRequest, arch: str) -> None:
    table, flavor, driver = catalog.load_table(), request.flavor, request.driver
    if flavor not in FLAVORS:
        raise EnvkitError(f"--flavor: {flavor!r} is not a flavor", f"choose {', '.join(FLAVORS)}")
    archs = (arch,)
    try:
        release = catalog.resolve_torch(table, str(request.torch))
        chosen = catalog.resolve_cuda(table, release, request.cuda, flavor=flavor, archs=archs)
        if flavor == "pytorch":
            image = catalog.pytorch_image(release, chosen, "runtime")
        elif flavor == "cuda":
            image = catalog.nvidia_cuda_image(chosen, "runtime", None, archs)
        else:
            image = "your base.image"
    except FieldError as exc:
        raise EnvkitError(exc.problem, exc.fix) from None
    builds = release.on(arch)
    source = (
        "image"
        if flavor == "pytorch"
        else catalog.torch_source(release, chosen, "auto", custom_index=False, archs=archs)
    )
    index = f"https://download.pytorch.org/whl/{chosen.wheel}"
    result = {
        "torch": release.version,
        "platform": f"linux/{arch}",
        "cuda": chosen.version,
        "cuda_builds": list(builds.cuda),
        "image": image,
        "wheel_index": index,
        "pypi_build": _pypi_build(builds.pypi),
        "torch_source": source,
        "torch_from": {
            "image": f"the image {image}",
            "pypi": "PyPI (the pip index: a mirror preset's PyPI serves it)",
        }.get(source, index),
        "confirmed": release.confirmed,
        "min_driver": chosen.min_driver or "not yet in the table (the family floor applies)",
        "python": list(release.python),
    }
    if driver is not None:
        verdict, why = catalog.driver_verdict(chosen, driver)
        result.update(driver_verdict=verdict, driver_explanation=why)
    if request.json:
        typer.echo(json.dumps(result, indent=2))
        return
    for key, value in result.items():
        shown = ", ".join(value) if isinstance(value, list) else value
        typer.echo(f"{key:>18}: {shown}")


def show_mirrors(as_json: bool) -> None:
    rows: list[dict[str, Any]] = [
        {
            "preset": preset.name,
            "title": preset.title,
            "documented": preset.documented,
            "apt": preset.apt.base if preset.apt else None,
            "apt_archives": list(preset.apt.archives) if preset.apt else [],
            "pip": preset.pip,
            "conda": preset.conda.base if preset.conda else None,
            "help": preset.help,
        }
        for preset in load_presets().values()
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        mark = "" if row["documented"] else "  (* third-party paths, not the mirror's own docs)"
        typer.echo(f"{row['preset']:<12} {row['title']}{mark}")
        typer.echo(
            f"{'':<12} apt:   {row['apt'] or '(image sources kept)'} "
            f"{' '.join(row['apt_archives'])}"
        )
        typer.echo(f"{'':<12} pip:   {row['pip']}")
        typer.echo(f"{'':<12} conda: {row['conda'] or '(channels used directly)'}")


@dataclass(frozen=True, kw_only=True)
class CompatRequest:
    torch: str | None = None  # resolve this release
    cuda: str | None = None
    flavor: str = "pytorch"
    driver: str | None = None  # judge this host driver too
    mirrors: bool = False  # list the mirror presets instead
    json: bool = False
    arch: str | None = None  # --arch: one architecture's builds (arm64, linux/arm64, aarch64)


def run(request: CompatRequest) -> int:
    """`envkit compat`: the mirror presets, the whole table, or one request resolved."""
    from envkit.platforms import architecture

    arch = architecture(request.arch).arch if request.arch is not None else None
    if request.mirrors:
        show_mirrors(request.json)
    elif request.torch is None:
        show_table(request.json, arch)
    else:
        show_resolution(request, arch or "amd64")
    return 0
