"""Every combination of flavor, base image, cuda and torch (issue 34): a plan and a render, or a
refusal in words (ConfigError naming the field and the fix), never a traceback. CPU boxes and
projects without torch have first-class paths: `cuda: cpu` on the pytorch flavor is a Python
base with torch's CPU wheel; `torch: none` installs no torch on any base."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from envkit.config.load import load_text
from envkit.errors import EnvkitError
from envkit.plan import make_plan
from envkit.render.files import render_files

FLAVORS = ("pytorch", "cuda", "custom")
IMAGES = (None, "debian:bookworm")
CUDAS = (None, "cpu", "12.4", "11.8", "13.0", "99.9")
TORCHES = (None, "none", "2.4.1", "2.4", "1.11.0", "9.9")


def _config(flavor: str, image: str | None, cuda: str | None, torch: str | None) -> str:
    text = f"name: space\nbase:\n  flavor: {flavor}\n"
    text += f"  image: {image}\n" if image else ""
    text += f'cuda: "{cuda}"\n' if cuda else ""
    text += f'torch: "{torch}"\n' if torch else ""
    return text + "ssh:\n  allow_no_keys: true\n"


@pytest.mark.parametrize("flavor", FLAVORS)
def test_no_combination_ends_in_a_traceback(flavor: str, tmp_path: Path) -> None:
    planned = refused = 0
    for image, cuda, torch in itertools.product(IMAGES, CUDAS, TORCHES):
        text = _config(flavor, image, cuda, torch)
        try:
            plan = make_plan(load_text(text, path=tmp_path / "envkit.yaml"))
            render_files(plan)
            planned += 1
        except EnvkitError as exc:
            refused += 1
            assert "fix:" in str(exc) or exc.fix, (text, str(exc))
    assert planned and refused, (planned, refused)


@pytest.mark.parametrize(
    ("text", "base", "torch_line"),
    [
        ('cuda: "cpu"\n', "python:3.11-slim-bookworm", "download.pytorch.org/whl/cpu"),
        ('cuda: "cpu"\nbase:\n  flavor: cuda\n', "python:3.11-slim-bookworm", "whl/cpu"),
        ('cuda: "cpu"\nbase:\n  flavor: custom\n  image: debian:bookworm\ntorch: "2.4.1"\n',
         "debian:bookworm", "whl/cpu torch==2.4.1"),
        ('torch: "none"\nbase:\n  flavor: cuda\n', "nvidia/cuda:", None),
        # TensorFlow 2.12's CUDA, which no torch in the table is built for: its image, as asked
        ('torch: "none"\ncuda: "11.8"\nbase:\n  flavor: cuda\n', "nvidia/cuda:11.8.0-", None),
        ('torch: "none"\ncuda: "cpu"\nbase:\n  flavor: cuda\n', "python:3.11-slim-bookworm", None),
    ],
)  # fmt: skip
def test_cpu_boxes_and_projects_without_torch(
    text: str, base: str, torch_line: str | None, tmp_path: Path
) -> None:
    plan = make_plan(
        load_text("name: box\nssh:\n  allow_no_keys: true\n" + text, path=tmp_path / "envkit.yaml")
    )
    dockerfile = render_files(plan)["Dockerfile"]
    assert plan.image.base.startswith(base), plan.image.base
    if torch_line is None:
        assert "TORCH" not in dockerfile.upper().split("# 7.")[0].split("FROM")[1] or (
            "torch==" not in dockerfile
        )
        assert plan.torch.none
    else:
        assert torch_line in dockerfile, dockerfile


def test_torch_none_on_the_pytorch_flavor_is_refused_with_the_way_out(tmp_path: Path) -> None:
    chosen = 'name: box\ntorch: "none"\nbase: {flavor: pytorch}\n'
    with pytest.raises(EnvkitError) as caught:
        make_plan(load_text(chosen, path=tmp_path / "envkit.yaml"))
    assert "pytorch/pytorch images carry torch" in str(caught.value)
    assert "base.flavor: cuda" in str(caught.value)


def test_a_flavor_nobody_chose_follows_torch_none_and_arm64(tmp_path: Path) -> None:
    """Issue 47: the default flavor (pytorch/pytorch: torch inside, x86 only) adapts to a
    config that cannot have it, and says so, rather than refusing what the user never wrote."""
    for text in ('name: box\ntorch: "none"\n', "name: box\nplatforms: [linux/arm64]\n"):
        plan = make_plan(load_text(text, path=tmp_path / "envkit.yaml"))
        assert plan.image.flavor == "cuda"
        assert any(n.startswith("base.flavor: cuda, which torch: none") for n in plan.notes)
