"""The bad-config corpus, through the real CLI entry point (`envkit.cli.main`, in process):
every case exits 2 with the file, line, field and a fix, no traceback, and nothing on disk.

The table holds the semantic classes issue 9 names (hostile or sloppy values that each pass
their own pattern) plus, from test_config_errors.BAD, every field-level case, so the corpus is
one list of more than 150 configs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envkit import cli
from tests.helpers import EXAMPLES
from tests.unit.bad_configs import BAD

KEY = (EXAMPLES / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()
K = f"  authorized_keys: ['{KEY}']\n"


def member(name: str, extra: str = "") -> str:
    return f"    - {{name: {name}, keys: ['{KEY}']{extra}}}\n"


def per_member(*members: str, ssh: str = "") -> str:
    return f"name: a\nssh:\n{ssh}{K}team:\n  mode: per-member\n  members:\n" + "".join(members)


# (case id, yaml, dotted field, line, a phrase of the problem or fix)
SEMANTIC = [
    # ports: type, range, clashes
    ("ssh-port-true", f"name: a\nssh:\n{K}  port: true\n", "ssh.port", 4, "whole number"),
    ("ssh-port-string", f"name: a\nssh:\n{K}  port: '22x'\n", "ssh.port", 4, "whole number"),
    ("ssh-port-float", f"name: a\nssh:\n{K}  port: 8822.5\n", "ssh.port", 4, "whole number"),
    ("ssh-port-65536", f"name: a\nssh:\n{K}  port: 65536\n", "ssh.port", 4, "range"),
    (
        "ports-duplicate-host",
        "name: a\nruntime:\n  ports: ['7000:80', '7000:81']\n",
        "runtime.ports[1]",
        3,
        "already published by runtime.ports[0]",
    ),
    (
        "ports-wildcard-and-loopback",
        "name: a\nruntime:\n  ports: ['127.0.0.1:7000:80', '7000:81']\n",
        "runtime.ports[1]",
        3,
        "already published",
    ),
    (
        "ports-duplicate-v6",
        "name: a\nruntime:\n  ports: ['[::1]:7000:80', '[0:0::1]:7000:81']\n",
        "runtime.ports[1]",
        3,
        "already published",
    ),
    ("ports-zero", "name: a\nruntime:\n  ports: ['0:80']\n", "runtime.ports[0]", 3, "range"),
    ("ports-huge", "name: a\nruntime:\n  ports: ['99999:80']\n", "runtime.ports[0]", 3, "range"),
    (
        "ports-container-zero",
        "name: a\nruntime:\n  ports: ['7000:0']\n",
        "runtime.ports[0]",
        3,
        "range",
    ),
    (
        "ports-bad-ip",
        "name: a\nruntime:\n  ports: ['999.1.1.1:7000:80']\n",
        "runtime.ports[0]",
        3,
        "address",
    ),
    ("ports-shell", "name: a\nruntime:\n  ports: ['7000:80;id']\n", "runtime.ports[0]", 3, "port"),
    (
        "ports-vs-ssh-port",
        f"name: a\nssh:\n{K}  port: 7000\nruntime:\n  ports: ['7000:80']\n",
        "ssh.port",
        4,
        "already used by runtime.ports[0]",
    ),
    ("bind-999", f"name: a\nssh:\n{K}  bind: 999.999.999.999\n", "ssh.bind", 4, "address"),
    ("bind-hostname", f"name: a\nssh:\n{K}  bind: myhost\n", "ssh.bind", 4, "address"),
    (
        "member-port-is-ssh-port",
        per_member(member("amy", ", port: 9000"), ssh="  port: 9000\n"),
        "team.members[0].port",
        8,
        "ssh.port",
    ),
    (
        "member-ports-equal",
        per_member(member("amy", ", port: 9100"), member("bob", ", port: 9100")),
        "team.members[1].port",
        8,
        "already used by member amy",
    ),
    (
        "member-port-bool",
        per_member(member("amy", ", port: true")),
        "team.members[0].port",
        7,
        "whole number",
    ),
    # accounts
    ("member-root", per_member(member("root")), "team.members[0].name", 7, "system account"),
    ("member-sshd", per_member(member("sshd")), "team.members[0].name", 7, "system account"),
    ("member-nobody", per_member(member("nobody")), "team.members[0].name", 7, "system account"),
    ("member-www-data", per_member(member("www-data")), "team.members[0].name", 7, "system"),
    (
        "member-uid-nobody",
        per_member(member("amy", ", uid: 65534")),
        "team.members[0].uid",
        7,
        "nobody",
    ),
    ("member-uid-zero", per_member(member("amy", ", uid: 0")), "team.members[0].uid", 7, "1"),
    (
        "member-uid-bool",
        per_member(member("amy", ", uid: true")),
        "team.members[0].uid",
        7,
        "number",
    ),
    (
        "per-member-empty",
        f"name: a\nssh:\n{K}team:\n  mode: per-member\n",
        "team.mode",
        5,
        "no members",
    ),
    ("user-sshd", f"name: a\nssh:\n{K}  user: sshd\n", "ssh.user", 4, "system account"),
    ("user-nobody", f"name: a\nssh:\n{K}  user: nobody\n", "ssh.user", 4, "system account"),
    ("user-daemon", f"name: a\nssh:\n{K}  user: daemon\n", "ssh.user", 4, "system account"),
    ("user-ubuntu", f"name: a\nssh:\n{K}  user: ubuntu\n", "ssh.user", 4, "system account"),
    ("user-apt", f"name: a\nssh:\n{K}  user: _apt\n", "ssh.user", 4, "system account"),
    ("uid-nobody", f"name: a\nssh:\n{K}  uid: 65534\n", "ssh.uid", 4, "nobody"),
    ("gid-nogroup", f"name: a\nssh:\n{K}  gid: 65534\n", "ssh.gid", 4, "nobody"),
    ("uid-huge", f"name: a\nssh:\n{K}  uid: 4294967296\n", "ssh.uid", 4, "range"),
    ("uid-string", f"name: a\nssh:\n{K}  uid: '1000'\n", "ssh.uid", 4, "whole number"),
    # a NUL byte in a host path (found by test_property_configs): refused, not a ValueError
    (
        "checks-dir-nul",
        'name: a\nverify:\n  checks_dir: "\\0"\n',
        "verify.checks_dir",
        3,
        "control character",
    ),
    # torch asked for twice: packages.pip's torch judged as a requirements file's is
    ("pip-torch", "name: a\npackages:\n  pip: ['torch==2.0.0']\n", "packages.pip[0]", 3, "torch:"),
    (
        "pip-Torch-range",
        "name: a\npackages:\n  pip: ['Torch<2']\n",
        "packages.pip[0]",
        3,
        "does not admit",
    ),
    (
        "pip-torch-extra",
        "name: a\npackages:\n  pip: [numpy, 'torch[opt-einsum]>=99']\n",
        "packages.pip[1]",
        3,
        "does not admit",
    ),
    (
        "pip-torch-url",
        "name: a\npackages:\n  pip: ['torch @ https://x.org/torch.whl']\n",
        "packages.pip[0]",
        3,
        "from a URL",
    ),
    (
        "pip-torch-with-options",
        "name: a\npackages:\n  pip: [{name: torch, no_build_isolation: true}]\n",
        "packages.pip[0]",
        3,
        "options of its own",
    ),
    (
        "pip-torch-torch-none",
        "name: a\ntorch: none\nbase: {flavor: cuda}\npackages:\n  pip: [torch]\n",
        "packages.pip[0]",
        5,
        "torch: none",
    ),
    ("conda-pip-torch", "name: a\nconda:\n  pip: [torch]\n", "conda.pip[0]", 3, "pins"),
    (
        "conda-dep-pytorch",
        "name: a\nconda:\n  dependencies: ['pytorch=2.1']\n",
        "conda.dependencies[0]",
        3,
        "pins",
    ),
    (
        "conda-dep-channel-pytorch",
        "name: a\nconda:\n  dependencies: ['pytorch::pytorch']\n",
        "conda.dependencies[0]",
        3,
        "pins",
    ),
    (
        "packages-conda-pytorch",
        "name: a\npackages:\n  conda: [pytorch]\n",
        "packages.conda[0]",
        3,
        "pins",
    ),
    # plain http and trust
    (
        "installer-http",
        "name: a\nbase: {flavor: cuda}\nconda:\n  installer_url: http://x.org/Miniforge3.sh\n",
        "conda.installer_url",
        4,
        "installer_sha256",
    ),
    (
        "installer-https-unchecked",
        "name: a\nconda:\n  installer_url: https://x.org/Miniforge3.sh\n",
        "conda.installer_url",
        3,
        "installer_sha256",
    ),
    (
        "installer-sha-short",
        "name: a\nconda:\n  installer_url: https://x.org/M.sh\n  installer_sha256: abc\n",
        "conda.installer_sha256",
        4,
        "64",
    ),
    (
        "pytorch-index-http",
        "name: a\nmirrors:\n  pytorch_index: http://x.org/whl/cu124\n",
        "mirrors.pytorch_index",
        3,
        "trusted_hosts: [x.org]",
    ),
    ("pip-http", "name: a\nmirrors:\n  pip: http://x.org/simple\n", "mirrors.pip", 3, "https"),
    (
        "pip-http-other-host-trusted",
        "name: a\nmirrors:\n  pip: http://x.org/simple\n  trusted_hosts: [y.org]\n",
        "mirrors.pip",
        3,
        "https",
    ),
    (
        "extra-index-http",
        "name: a\nmirrors:\n  extra_index_urls: [https://ok.org/simple, http://x.org/simple]\n",
        "mirrors.extra_index_urls[1]",
        3,
        "plain http",
    ),
    (
        "conda-mirror-http",
        "name: a\nmirrors:\n  conda: http://x.org/anaconda\n",
        "mirrors.conda",
        3,
        "https",
    ),
    (
        "trusted-pypi",
        "name: a\nmirrors:\n  trusted_hosts: [pypi.org]\n",
        "mirrors.trusted_hosts[0]",
        3,
        "TLS",
    ),
    (
        "trusted-files-host",
        "name: a\nmirrors:\n  trusted_hosts: [ok.lan, files.pythonhosted.org]\n",
        "mirrors.trusted_hosts[1]",
        3,
        "TLS",
    ),
    (
        "trusted-pytorch",
        "name: a\nmirrors:\n  trusted_hosts: ['download.pytorch.org:443']\n",
        "mirrors.trusted_hosts[0]",
        3,
        "TLS",
    ),
    (
        "trusted-tuna",
        "name: a\nmirrors:\n  trusted_hosts: [mirrors.tuna.tsinghua.edu.cn]\n",
        "mirrors.trusted_hosts[0]",
        3,
        "own network",
    ),
    (
        "trusted-host-with-scheme",
        "name: a\nmirrors:\n  trusted_hosts: ['http://x.org']\n",
        "mirrors.trusted_hosts[0]",
        3,
        "bare host",
    ),
    # mirror roots
    (
        "apt-doubled-ubuntu",
        "name: a\nmirrors:\n  apt: https://m.org/ubuntu\n",
        "mirrors.apt",
        3,
        "/ubuntu/ubuntu",
    ),
    (
        "apt-doubled-debian",
        "name: a\nmirrors:\n  apt: https://m.org/debian/\n",
        "mirrors.apt",
        3,
        "https://m.org/",
    ),
    (
        "apt-doubled-ports",
        "name: a\nmirrors:\n  apt: https://m.org/ubuntu-ports\n",
        "mirrors.apt",
        3,
        "root",
    ),
    (
        "conda-doubled-pkgs",
        "name: a\nmirrors:\n  conda: https://m.org/anaconda/pkgs/main\n",
        "mirrors.conda",
        3,
        "root",
    ),
    (
        "conda-doubled-cloud",
        "name: a\nmirrors:\n  conda: https://m.org/anaconda/cloud\n",
        "mirrors.conda",
        3,
        "root",
    ),
    ("apt-query", "name: a\nmirrors:\n  apt: 'https://m.org/?x=1'\n", "mirrors.apt", 3, "query"),
    ("pip-ftp", "name: a\nmirrors:\n  pip: ftp://m.org/simple\n", "mirrors.pip", 3, "URL"),
    # envkit's own names and folders
    (
        "env-ENVKIT_USER",
        "name: a\nruntime:\n  env: {ENVKIT_USER: x}\n",
        "runtime.env.ENVKIT_USER",
        3,
        "envkit's own",
    ),
    (
        "env-ENVKIT_UID",
        "name: a\nruntime:\n  env:\n    ENVKIT_UID: '0'\n",
        "runtime.env.ENVKIT_UID",
        4,
        "envkit's own",
    ),
    (
        "env-envkit-lower",
        "name: a\nruntime:\n  env: {envkit_keys: x}\n",
        "runtime.env.envkit_keys",
        3,
        "envkit's own",
    ),
    ("env-key-space", "name: a\nruntime:\n  env: {'A B': x}\n", "runtime.env.A B", 3, "letters"),
    ("env-key-dollar", "name: a\nruntime:\n  env: {'A$B': x}\n", "runtime.env.A$B", 3, "letters"),
    (
        "env-value-newline",
        'name: a\nruntime:\n  env: {A: "x\\ny"}\n',
        "runtime.env.A",
        3,
        "one line",
    ),
    ("env-value-nul", 'name: a\nruntime:\n  env: {A: "x\\0y"}\n', "runtime.env.A", 3, "one line"),
    (
        "vol-keys",
        "name: a\nruntime:\n  volumes: ['./k:/run/envkit/keys']\n",
        "runtime.volumes[0]",
        3,
        "envkit's own",
    ),
    (
        "vol-run-envkit",
        "name: a\nruntime:\n  volumes: ['./k:/run/envkit']\n",
        "runtime.volumes[0]",
        3,
        "hide",
    ),
    (
        "vol-hostkeys",
        "name: a\nruntime:\n  volumes: ['./k:/var/lib/envkit/hostkeys:ro']\n",
        "runtime.volumes[0]",
        3,
        "hide",
    ),
    (
        "vol-over-run",
        "name: a\nruntime:\n  volumes: ['./k:/run']\n",
        "runtime.volumes[0]",
        3,
        "hide",
    ),
    (
        "vol-over-opt",
        "name: a\nruntime:\n  volumes: ['./d:/data', './k:/opt/']\n",
        "runtime.volumes[1]",
        3,
        "hide",
    ),
    ("vol-root", "name: a\nruntime:\n  volumes: ['./k:/']\n", "runtime.volumes[0]", 3, "hide"),
    (
        "vol-quote",
        'name: a\nruntime:\n  volumes: ["./k:/x\'"]\n',
        "runtime.volumes[0]",
        3,
        "HOST_PATH",
    ),
    # GPUs, sizes, thresholds
    ("gpus-duplicate", "name: a\nruntime:\n  gpus: [0, 0]\n", "runtime.gpus", 3, "twice"),
    (
        "gpus-duplicate-uuid",
        "name: a\nruntime:\n  gpus: ['GPU-"
        + "a" * 8
        + "-"
        + "b" * 4
        + "-"
        + "c" * 4
        + "-"
        + "d" * 4
        + "-"
        + "e" * 12
        + "', 'GPU-"
        + "a" * 8
        + "-"
        + "b" * 4
        + "-"
        + "c" * 4
        + "-"
        + "d" * 4
        + "-"
        + "e" * 12
        + "']\n",
        "runtime.gpus",
        3,
        "twice",
    ),
    ("gpus-huge", "name: a\nruntime:\n  gpus: 100000\n", "runtime.gpus", 3, "between 1 and 64"),
    ("gpus-zero", "name: a\nruntime:\n  gpus: 0\n", "runtime.gpus", 3, "none"),
    ("gpus-negative", "name: a\nruntime:\n  gpus: -1\n", "runtime.gpus", 3, "none"),
    ("gpus-bool", "name: a\nruntime:\n  gpus: true\n", "runtime.gpus", 3, "GPU request"),
    ("gpus-empty-list", "name: a\nruntime:\n  gpus: []\n", "runtime.gpus", 3, "GPU request"),
    (
        "gpus-long-list",
        "name: a\nruntime:\n  gpus: [" + ", ".join(map(str, range(65))) + "]\n",
        "runtime.gpus",
        3,
        "GPU request",
    ),
    ("shm-zero", "name: a\nruntime:\n  shm_size: '0'\n", "runtime.shm_size", 3, "1 MiB"),
    ("shm-bytes", "name: a\nruntime:\n  shm_size: 64k\n", "runtime.shm_size", 3, "gigabytes"),
    ("shm-absurd", "name: a\nruntime:\n  shm_size: 100000gb\n", "runtime.shm_size", 3, "4 TiB"),
    (
        "shm-digits",
        "name: a\nruntime:\n  shm_size: '99999999999999999999999'\n",
        "runtime.shm_size",
        3,
        "size",
    ),
    ("shm-int", "name: a\nruntime:\n  shm_size: 16\n", "runtime.shm_size", 3, "quoted string"),
    (
        "min-shm-above",
        "name: a\nruntime:\n  shm_size: 1gb\nverify:\n  min_shm: 2gb\n",
        "verify.min_shm",
        5,
        "above runtime.shm_size",
    ),
    ("min-shm-zero", "name: a\nverify:\n  min_shm: 0b\n", "verify.min_shm", 3, "1 MiB"),
    (
        "threshold-nan",
        "name: a\nverify:\n  thresholds: {bench.matmul_fp32: .nan}\n",
        "verify.thresholds.bench.matmul_fp32",
        3,
        "finite",
    ),
    (
        "threshold-inf",
        "name: a\nverify:\n  thresholds: {bench.matmul_fp32: .inf}\n",
        "verify.thresholds.bench.matmul_fp32",
        3,
        "finite",
    ),
    (
        "threshold-negative",
        "name: a\nverify:\n  thresholds: {bench.matmul_bf16: -0.1}\n",
        "verify.thresholds.bench.matmul_bf16",
        3,
        "greater than 0",
    ),
    (
        "threshold-zero",
        "name: a\nverify:\n  thresholds: {bench.matmul_bf16: 0}\n",
        "verify.thresholds.bench.matmul_bf16",
        3,
        "greater than 0",
    ),
    (
        "threshold-percent",
        "name: a\nverify:\n  thresholds: {bench.matmul_bf16: 75}\n",
        "verify.thresholds.bench.matmul_bf16",
        3,
        "less than or equal to 1",
    ),
    (
        "threshold-unknown",
        "name: a\nverify:\n  thresholds: {bench.nope: 0.5}\n",
        "verify.thresholds.bench.nope",
        3,
        "bench.matmul_bf16",
    ),
    (
        "threshold-not-bench",
        "name: a\nverify:\n  thresholds: {cuda.available: 0.5}\n",
        "verify.thresholds.cuda.available",
        3,
        "takes a threshold",
    ),
    (
        "threshold-string",
        "name: a\nverify:\n  thresholds: {bench.matmul_bf16: high}\n",
        "verify.thresholds.bench.matmul_bf16",
        3,
        "number",
    ),
    (
        "expected-gpus-huge",
        "name: a\nverify:\n  expected_gpus: 1000000000000000000000000000000\n",
        "verify.expected_gpus",
        3,
        "64",
    ),
    (
        "expected-gpus-negative",
        "name: a\nverify:\n  expected_gpus: -2\n",
        "verify.expected_gpus",
        3,
        "0",
    ),
    (
        "expected-gpus-bool",
        "name: a\nverify:\n  expected_gpus: true\n",
        "verify.expected_gpus",
        3,
        "whole number",
    ),
    # bases
    (
        "base-alpine",
        "name: a\nbase: {flavor: custom, image: 'alpine:3.19'}\n",
        "base.image",
        2,
        "Debian or Ubuntu",
    ),
    (
        "base-busybox",
        "name: a\nbase:\n  flavor: custom\n  image: busybox\n",
        "base.image",
        4,
        "apt-get",
    ),
    (
        "base-fedora",
        "name: a\nbase: {flavor: custom, image: 'registry.example.org/fedora:40'}\n",
        "base.image",
        2,
        "Debian",
    ),
    (
        "base-ubi",
        "name: a\nbase: {flavor: custom, image: 'redhat/ubi9-minimal'}\n",
        "base.image",
        2,
        "Debian",
    ),
    (
        "base-centos-digest",
        "name: a\nbase: {flavor: custom, image: 'centos@sha256:" + "0" * 64 + "'}\n",
        "base.image",
        2,
        "Debian",
    ),
    ("base-custom-no-image", "name: a\nbase: {flavor: custom}\n", "base", 2, "base.image"),
    # YAML shapes
    ("yaml-duplicate-key", "name: a\nname: b\n", "name", 2, "lines 1 and 2"),
    (
        "yaml-duplicate-nested",
        "name: a\nssh:\n  port: 1\n  port: 2\n",
        "ssh.port",
        4,
        "lines 3 and 4",
    ),
    ("yaml-anchor", "name: &n a\nssh:\n  user: *n\n", "(file)", 1, "anchor"),
    ("yaml-merge-key", "name: a\nx: &x {port: 1}\nssh:\n  <<: *x\n", "(file)", 2, "anchor"),
    ("yaml-deep", "name: a\nruntime:\n  env: " + "[" * 40 + "]" * 40 + "\n", "(file)", 3, "deep"),
    ("yaml-tab", "name: a\nssh:\n\tport: 1\n", "(file)", 3, "YAML"),
    ("yaml-nul", "name: a\x00\n", "(file)", 1, "NUL"),
    ("yaml-python-tag", "name: !!python/object:os.system a\n", "(file)", 1, "YAML"),
    ("yaml-complex-key", "? [a, b]\n: c\nname: a\n", "(file)", 1, "key"),
    ("yaml-list-top", "[name, a]\n", "(file)", 1, "mapping"),
    ("yaml-scalar-top", "just text\n", "(file)", 1, "mapping"),
    ("name-too-long", "name: " + "a" * 64 + "\n", "name", 1, "lowercase"),
    ("name-null", "name:\n", "name", 1, "string"),
]

CORPUS = [(case, text, 2, path, line, phrase) for case, text, path, line, phrase in SEMANTIC] + [
    (f"field-{case}", text, 2, path, line, phrase) for case, text, path, line, phrase in BAD
]


def run_cli(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """envkit's own entry point in this process: an exception other than its SystemExit would
    be the traceback a user sees."""
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["envkit", *args])
    with pytest.raises(SystemExit) as done:
        cli.main()
    code = done.value.code
    return code if isinstance(code, int) else 0


def test_the_corpus_is_large_and_its_ids_unique() -> None:
    ids = [case[0] for case in CORPUS]
    assert len(ids) >= 150 and len(set(ids)) == len(ids)


@pytest.mark.parametrize(
    ("case", "text", "code", "path", "line", "phrase"), CORPUS, ids=[c[0] for c in CORPUS]
)
def test_a_bad_config_exits_2_naming_file_line_field_and_fix(
    case: str,
    text: str,
    code: int,
    path: str,
    line: int | None,
    phrase: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "envkit.yaml").write_text(text)
    (tmp_path / "keys").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    assert run_cli("render", cwd=tmp_path, monkeypatch=monkeypatch) == code
    err = capsys.readouterr().err
    where = f"envkit.yaml:{line}: {path}" if line else f"envkit.yaml: {path}"
    assert where in err, err
    assert "fix:" in err and phrase in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing written"
