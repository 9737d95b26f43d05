"""Platforms (linux/amd64, linux/arm64): the grammar and its refusals, the table's arm64 rows
resolved, where a Grace box's torch comes from, the emulator's registration read, a lock's
platform checked, the inputs tag naming the platforms, and the cluster renders."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.catalog import compat
from envkit.cluster.k8s import plan_k8s, render_k8s
from envkit.engine.emulation import emulated_platform, emulation, require_emulation
from envkit.errors import EnvkitError, FieldError
from envkit.lock.pins import check_platforms
from envkit.platforms import architecture, platform_tag
from envkit.render.digest import context_digest
from envkit.render.files import render_files
from envkit.verify.request import K8sRequest
from tests.helpers import plan_text, render_refused

GRACE = "name: grace\nbase: {flavor: cuda}\nssh: {allow_no_keys: true}\n"


@pytest.mark.parametrize(
    ("name", "platform", "machine"),
    [
        ("linux/arm64", "linux/arm64", "aarch64"),
        ("arm64", "linux/arm64", "aarch64"),
        ("aarch64", "linux/arm64", "aarch64"),
        ("linux/arm64/v8", "linux/arm64", "aarch64"),
        ("x86_64", "linux/amd64", "x86_64"),
        ("AMD64", "linux/amd64", "x86_64"),
    ],
)
def test_every_name_of_an_architecture_means_it(name: str, platform: str, machine: str) -> None:
    found = architecture(name)
    assert (found.platform, found.machine) == (platform, machine)
    assert platform_tag("envkit/p:latest", name) == f"envkit/p:latest-{found.arch}"


def test_a_platform_envkit_does_not_build_is_refused_with_the_choices() -> None:
    with pytest.raises(EnvkitError) as caught:
        architecture("linux/s390x")
    assert "linux/amd64 or linux/arm64" in str(caught.value.fix)


def test_bad_platforms_in_envkit_yaml_are_refused_at_their_lines(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text(GRACE + "platforms: [linux/arm64, linux/riscv64]\n")
    said = render_refused(tmp_path)
    assert "envkit.yaml:4" in said and "linux/riscv64" in said and "'linux/arm64'" in said
    (tmp_path / "envkit.yaml").write_text(GRACE + "platforms: [linux/arm64, linux/arm64]\n")
    said = render_refused(tmp_path)
    assert "linux/arm64 is listed twice" in said
    (tmp_path / "envkit.yaml").write_text(GRACE + "platforms: []\n")
    assert "platforms" in render_refused(tmp_path)


def test_a_grace_box_gets_torch_from_the_pytorch_index_where_pypi_has_a_cpu_build() -> None:
    """torch 2.10's PyPI wheel is CUDA 12.8 on x86-64 but a CPU build on aarch64 (the table,
    read from the wheels' METADATA): an x86 box takes PyPI's, a Grace box the index's."""
    table = compat.load_table()
    release = table.torch["2.10.0"]
    assert release.on("amd64").pypi == "12.8" and release.on("arm64").pypi == "cpu"
    x86 = plan_text(GRACE + 'torch: "2.10.0"\n')
    assert x86.torch.source == "pypi"
    grace = plan_text(GRACE + 'torch: "2.10.0"\nplatforms: [linux/arm64]\n')
    assert grace.torch.source == "pytorch-index"
    assert grace.torch.index_url == "https://download.pytorch.org/whl/cu128"
    dockerfile = render_files(grace)["Dockerfile"]
    assert "--index-url https://download.pytorch.org/whl/cu128 torch==2.10.0" in dockerfile
    assert "--index-url https://pypi.org/simple torch==" not in dockerfile
    both = plan_text(GRACE + 'torch: "2.10.0"\nplatforms: [linux/amd64, linux/arm64]\n')
    assert both.torch.source == "pytorch-index"
    # From 2.11 PyPI's aarch64 wheel is a CUDA build: PyPI serves both architectures.
    newer = plan_text(GRACE + 'torch: "2.11.0"\nplatforms: [linux/amd64, linux/arm64]\n')
    assert (newer.torch.source, newer.torch.cuda) == ("pypi", "13.0")


def test_pypi_is_refused_for_a_grace_gpu_box_where_it_carries_a_cpu_build(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text(
        GRACE + 'torch: "2.10.0"\ntorch_source: pypi\nplatforms: [linux/arm64]\n'
    )
    said = render_refused(tmp_path)
    assert "PyPI's torch 2.10.0 for linux/arm64 is the cpu build" in said
    assert "torch_source: pytorch-index" in said


def test_combinations_that_do_not_exist_on_arm64_are_refused_with_those_that_do() -> None:
    table = compat.load_table()
    with pytest.raises(FieldError) as caught:
        compat.resolve_cuda(table, table.torch["2.4.1"], None, flavor="cuda", archs=("arm64",))
    assert "has no CUDA build for linux/arm64" in caught.value.problem
    newest = max((v for v, t in table.torch.items() if t.arm64.cuda), key=compat.version_key)
    assert f"{newest} (CUDA " in str(caught.value.fix)
    with pytest.raises(FieldError) as caught:
        compat.resolve_cuda(table, table.torch["2.7.0"], "12.6", flavor="cuda", archs=("arm64",))
    assert caught.value.problem == "torch 2.7.0's CUDA 12.6 build has no linux/arm64 wheels"
    assert "12.8" in str(caught.value.fix)
    with pytest.raises(FieldError) as caught:
        compat.resolve_cuda(table, table.torch["2.7.0"], None, flavor="pytorch", archs=("arm64",))
    assert "pytorch/pytorch has no linux/arm64 image" in caught.value.problem
    assert "base.flavor: cuda" in str(caught.value.fix)
    both = compat.resolve_cuda(
        table, table.torch["2.7.0"], None, flavor="cuda", archs=("amd64", "arm64")
    )
    assert both.version == "12.8", "the build both architectures have"


def test_compat_arch_names_the_newest_release_s_builds_and_where_they_come_from() -> None:
    from tests.helpers import envkit

    table = compat.load_table()
    newest = max(table.torch, key=compat.version_key)
    done = envkit("compat", "--arch", "arm64", "--torch", newest, "--flavor", "custom", "--json")
    assert done.returncode == 0, done.stderr
    import json

    shown = json.loads(done.stdout)
    assert shown["platform"] == "linux/arm64" and shown["cuda_builds"]
    assert shown["cuda"] in shown["cuda_builds"] and shown["torch_from"]
    refused = envkit("compat", "--arch", "s390x")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr


def _binfmt(root: Path, text: str | None) -> Path:
    (root / "status").write_text("enabled\n")
    if text is not None:
        (root / "qemu-aarch64").write_text(text)
    return root


def test_the_emulator_s_registration_is_read_as_the_kernel_lists_it(tmp_path: Path) -> None:
    good = "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: PF\noffset 0\n"
    assert emulation("linux/arm64", _binfmt(tmp_path, good)).registered
    no_f = good.replace("flags: PF", "flags: P")
    found = emulation("linux/arm64", _binfmt(tmp_path, no_f))
    assert not found.registered and "without the F flag" in found.detail
    disabled = "disabled\n" + good.split("\n", 1)[1]
    assert "disabled" in emulation("linux/arm64", _binfmt(tmp_path, disabled)).detail
    (tmp_path / "qemu-aarch64").unlink()
    assert "no qemu-aarch64 entry" in emulation("linux/arm64", tmp_path).detail
    assert "not mounted" in emulation("linux/arm64", tmp_path / "nowhere").detail


def test_a_foreign_platform_without_the_emulator_is_refused_with_how_to_register_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import envkit.engine.emulation as module

    monkeypatch.setattr(module, "BINFMT", tmp_path / "not-mounted")
    with pytest.raises(EnvkitError) as caught:
        require_emulation("linux/arm64", "linux/amd64", remote=False)
    assert "building linux/arm64 on this linux/amd64 engine needs QEMU" in caught.value.message
    assert "update-binfmts --enable qemu-aarch64" in str(caught.value.fix)
    require_emulation("linux/amd64", "linux/amd64", remote=False)  # native: nothing needed
    require_emulation("linux/arm64", "linux/amd64", remote=True)  # the remote host's to say


def test_a_lock_is_one_platform_s() -> None:
    lock = {"base": {"arch": ("arm64",)}}
    check_platforms(lock, ("linux/arm64",), Path("envkit.arm64.lock"))  # type: ignore[arg-type]
    with pytest.raises(EnvkitError) as caught:
        check_platforms(lock, ("linux/amd64",), Path("envkit.lock"))  # type: ignore[arg-type]
    assert "made from a linux/arm64 image; this build is for linux/amd64" in caught.value.message
    with pytest.raises(EnvkitError) as caught:
        check_platforms(lock, ("linux/amd64", "linux/arm64"), Path("x"))  # type: ignore[arg-type]
    assert "--platform" in str(caught.value.fix)


def test_the_inputs_tag_names_the_platforms() -> None:
    files = {"Dockerfile": "FROM debian\n"}
    one = context_digest(files, platforms=("linux/amd64",))
    other = context_digest(files, platforms=("linux/arm64",))
    both = context_digest(files, platforms=("linux/arm64", "linux/amd64"))
    assert len({one, other, both}) == 3
    assert both == context_digest(files, platforms=("linux/amd64", "linux/arm64"))


def test_kubernetes_pods_land_only_on_nodes_of_the_image_s_architectures() -> None:
    plan = plan_text(GRACE + "platforms: [linux/amd64, linux/arm64]\n")
    rendered = render_k8s(plan_k8s(plan, K8sRequest(image="reg.lab:5000/grace@sha256:" + "a" * 64)))
    for name in ("job.yaml", "daemonset.yaml", "preflight-pod.yaml"):
        text = rendered[name]
        assert "key: kubernetes.io/arch" in text and 'values: ["amd64", "arm64"]' in text, name
    arm_only = plan_text(GRACE + "platforms: [linux/arm64]\n")
    text = render_k8s(plan_k8s(arm_only, K8sRequest(image="x")))["job.yaml"]
    assert 'values: ["arm64"]' in text


def test_an_arm64_lock_made_on_an_x86_engine_knows_the_base_s_packages_by_their_arm64_names() -> (
    None
):
    from envkit.lock.make import _as_arch

    base = {"libc6:amd64=2.36-9", "bash:amd64=5.2", "tzdata:all=2024a", "libc6:i386=2.36-9"}
    assert _as_arch(base, "amd64") == base
    assert _as_arch(base, "arm64") == {
        "libc6:arm64=2.36-9",
        "bash:arm64=5.2",
        "tzdata:all=2024a",
        "libc6:i386=2.36-9",
    }


def _project(tmp_path: Path, extra: str) -> object:
    from envkit.services.project import load_project

    (tmp_path / "envkit.yaml").write_text(GRACE + extra)
    return load_project(str(tmp_path / "envkit.yaml"))


def test_each_platform_s_image_has_its_own_tag_and_platform_picks_one(tmp_path: Path) -> None:
    from envkit.commands.build import _platform_images
    from envkit.services.sharing import build_platforms, local_images

    both = _project(tmp_path, "platforms: [linux/amd64, linux/arm64]\n")
    every = build_platforms(both, None)  # type: ignore[arg-type]
    assert every == ("linux/amd64", "linux/arm64")
    assert local_images(both, every) == {  # type: ignore[arg-type]
        "linux/amd64": "envkit/grace:latest-amd64",
        "linux/arm64": "envkit/grace:latest-arm64",
    }
    assert _platform_images(both, "my/x:1", every, False) == {  # type: ignore[arg-type]
        "linux/amd64": "my/x:1-amd64",
        "linux/arm64": "my/x:1-arm64",
    }
    arm = build_platforms(both, None, "aarch64")  # type: ignore[arg-type]
    assert arm == ("linux/arm64",)
    assert _platform_images(both, None, arm, True) == {  # type: ignore[arg-type]
        "linux/arm64": "envkit/grace:latest-arm64"
    }
    assert _platform_images(both, "my/x:1", arm, True) == {  # type: ignore[arg-type]
        "linux/arm64": "my/x:1-arm64"
    }
    one = _project(tmp_path, "platforms: [linux/arm64]\n")
    with pytest.raises(EnvkitError) as caught:
        build_platforms(one, None, "linux/amd64")  # type: ignore[arg-type]
    assert "this project is built for linux/arm64" in caught.value.message


class _Engine:
    def __init__(self, config: dict[str, object]) -> None:
        self.config = config

    def info(self) -> dict[str, object]:
        return {"RegistryConfig": self.config}


def test_the_index_is_written_over_plain_http_only_where_the_engine_allows_it() -> None:
    from envkit.engine.platform_index import _insecure

    strict = _Engine({"IndexConfigs": {}, "InsecureRegistryCIDRs": ["127.0.0.0/8"]})
    assert _insecure(strict, "127.0.0.1:5000") and _insecure(strict, "localhost:5000")
    assert not _insecure(strict, "registry.lab.example:5000")
    assert not _insecure(strict, "10.1.2.3:5000")
    listed = _Engine({"IndexConfigs": {"reg.lab:5000": {"Secure": False}}})
    assert _insecure(listed, "reg.lab:5000")
    cidr = _Engine({"IndexConfigs": {}, "InsecureRegistryCIDRs": ["10.0.0.0/8"]})
    assert _insecure(cidr, "10.1.2.3:5000") and not _insecure(cidr, "192.168.1.2:5000")


def test_a_cpu_torch_from_pypi_is_allowed_where_pypi_s_aarch64_wheel_is_the_cpu_build() -> None:
    table = compat.load_table()
    release = table.torch["2.10.0"]
    assert compat.torch_source(release, None, "pypi", custom_index=False, archs=("arm64",)) == (
        "pypi"
    )
    with pytest.raises(FieldError):  # x86-64's PyPI wheel is a CUDA build
        compat.torch_source(release, None, "pypi", custom_index=False, archs=("amd64", "arm64"))


def test_a_conda_lock_is_refused_for_an_arm64_image_it_has_no_packages_for(
    tmp_path: Path,
) -> None:
    lock = Path(__file__).parents[1] / "data" / "corpus"
    found = sorted(lock.rglob("conda-lock.yml")) or sorted(lock.rglob("pixi.lock"))
    assert found, "the corpus holds a conda lock"
    (tmp_path / found[0].name).write_bytes(found[0].read_bytes())
    (tmp_path / "envkit.yaml").write_text(
        GRACE + f"conda:\n  file: {found[0].name}\nplatforms: [linux/amd64, linux/arm64]\n"
    )
    said = render_refused(tmp_path)
    assert "linux-64 packages" in said and "linux/arm64" in said


def test_doctor_says_whether_the_other_platform_can_be_built_here(tmp_path: Path) -> None:
    from envkit.doctor.facts import EngineReading, HostRecord
    from envkit.doctor.findings import check_emulation
    from envkit.engine.emulation import Emulation
    from envkit.engine.endpoint import LOCAL_SOCKET, Endpoint
    from envkit.engine.facts import EngineFacts

    facts = EngineFacts(Endpoint(LOCAL_SOCKET, "test"), "engine", False, (), ())
    engine = EngineReading(None, {}, {}, facts)
    both = plan_text(GRACE + "platforms: [linux/amd64, linux/arm64]\n", tmp_path)
    missing = Emulation("linux/arm64", False, "no qemu-aarch64 entry in /proc/sys/fs/binfmt_misc")
    found = check_emulation(HostRecord(True, plan=both, engine=engine, emulation=(missing,)))
    assert found.status == "fail" and "linux/arm64" in found.message
    assert found.fix is not None and "qemu-user-static" in found.fix
    there = Emulation("linux/arm64", True, "qemu-aarch64 registered (…, flags PF)")
    ok = check_emulation(HostRecord(True, plan=both, engine=engine, emulation=(there,)))
    assert ok.status == "ok" and "under QEMU" in ok.message
    native = plan_text(GRACE + "platforms: [linux/amd64]\n", tmp_path)
    info = check_emulation(HostRecord(True, plan=native, engine=engine, emulation=(missing,)))
    assert info.status == "info", "nothing asks for it: said, not failed"


def test_an_image_of_another_architecture_than_the_engines_runs_under_emulation() -> None:
    """`verify --image` stretches its timeouts for such an image (targets/image.py): an arm64
    image on an amd64 engine runs through QEMU; the engine's own, or a name envkit does not
    know, is not said to."""
    assert emulated_platform("linux/amd64", "arm64") == "linux/arm64"
    assert emulated_platform("linux/arm64", "amd64") == "linux/amd64"
    assert emulated_platform("linux/amd64", "amd64") is None
    assert emulated_platform("linux/amd64", "s390x") is None
    assert emulated_platform("linux/amd64", "") is None
