"""A lock envkit writes is one it accepts (issue 34): for generated configs of every input kind
(inline pip with markers and URLs, requirements files, pyproject with and without a lock, a
conda file with a pip section, build steps, a notebook), the [requested] section `envkit lock`
writes passes the validator `build --locked` and `diff` apply, and reads back unchanged. A
property test over the real plan; the engine round trip is tests/e2e/test_real_projects.py's."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envkit.checks.programs.lockfile import empty_lock, format_lock, parse_lock
from envkit.config.load import load_spec
from envkit.lock.requested import requested
from envkit.lock.validate import problems
from envkit.plan import make_plan

PIP = st.sampled_from(
    [
        "numpy>=1.26",
        "requests[socks]==2.32.3",
        "bitsandbytes>=0.43; sys_platform == 'linux'",
        'rich; python_version >= "3.10"',
        "clip @ git+https://github.com/openai/CLIP.git@dcba3cb",
        "einops",
    ]
)
REQUIREMENT_LINES = st.lists(
    st.sampled_from(
        [
            "scipy==1.13.1",
            "torch==2.4.1",
            "torchvision>=0.19",
            "pandas>=2 ; python_version >= '3.9'",
            "git+https://github.com/huggingface/transformers.git@v4.44.2#egg=transformers",
            "--extra-index-url https://download.pytorch.org/whl/cu124",
            "six==1.16.0 --hash=sha256:" + "8a" * 32,
        ]
    ),
    min_size=1,
    max_size=5,
    unique=True,
)
CONDA = st.lists(
    st.sampled_from(["numpy=1.26", "pytorch::pytorch=2.4", "pytorch-cuda=12.4", "ffmpeg", "pip"]),
    max_size=4,
    unique=True,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pip=st.lists(PIP, max_size=4, unique=True),
    requirements=st.one_of(st.none(), REQUIREMENT_LINES),
    conda=st.one_of(st.none(), CONDA),
    conda_pip=st.lists(
        st.sampled_from(["einops==0.8.0", "timm; python_version >= '3.8'"]), max_size=2, unique=True
    ),
    project=st.booleans(),
    notebook=st.booleans(),
)  # fmt: skip
def test_requested_written_by_lock_is_accepted_and_reads_back(
    tmp_path_factory: object,
    pip: list[str],
    requirements: list[str] | None,
    conda: list[str] | None,
    conda_pip: list[str],
    project: bool,
    notebook: bool,
) -> None:
    folder = Path(tmp_path_factory.mktemp("proj"))  # type: ignore[attr-defined]
    lines = [
        'name: proj\nbase:\n  flavor: cuda\ntorch: "2.4.1"\ncuda: "12.4"\n',
        "ssh:\n  allow_no_keys: true\n",
        "packages:\n  pip:\n" + "".join(f"    - {p!r}\n" for p in pip) if pip else "",
    ]
    if requirements is not None:
        (folder / "requirements.txt").write_text("\n".join(requirements) + "\n")
        lines.append(("" if pip else "packages:\n") + "  requirements: [requirements.txt]\n")
    if conda is not None:
        body = "".join(f"  - {d}\n" for d in conda)
        if conda_pip:
            body += "  - pip:\n" + "".join(f"    - {p!r}\n" for p in conda_pip)
        (folder / "environment.yml").write_text("dependencies:\n" + body)
        lines.append("conda:\n  file: environment.yml\n")
    if project:
        (folder / "pyproject.toml").write_text(
            '[project]\nname = "demo"\nversion = "0.1"\n'
            'dependencies = ["tqdm>=4; python_version >= \'3.8\'", "torch>=2.4"]\n'
        )
        lines.append("python:\n  project: .\n")
    if notebook:
        lines.append("notebook:\n  enabled: true\n")
    lines.append("build:\n  steps:\n    - run: echo hi\n")
    (folder / "envkit.yaml").write_text("".join(lines))
    plan = make_plan(load_spec(str(folder / "envkit.yaml")))
    lock = empty_lock()
    lock["requested"] = requested(plan)
    text = format_lock(lock)
    back = parse_lock(text)
    assert back["requested"] == lock["requested"]
    found = [p for p in problems(back) if p.section == "requested"]
    assert not found, found
