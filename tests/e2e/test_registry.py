"""One image for the team through a real registry (Debian's docker-registry, htpasswd): push,
signed with the real cosign, remove, and `envkit up` pulls the same image instead of building,
its signature checked; an unsigned image under the same tag is refused; credentials and the key's
password come from the environment and never show."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import ENV_IMAGE
from tests.e2e.images import E2E_NAME, TEST_LABEL, copy_project, docker
from tests.e2e.registry import Registry, registry  # noqa: F401 (the fixture)
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _image_id(ref: str) -> str | None:
    found = docker("image", "inspect", "-f", "{{.Id}}", ref, check=False)
    return found.stdout.strip() if found.returncode == 0 else None


def test_push_remove_and_up_pulls_the_same_image_without_building(
    env_image: str,
    project_dir: Path,
    tmp_path: Path,
    registry: Registry,  # noqa: F811
) -> None:
    # The e2e project's own config and keys, with a registry: the same inputs as ENV_IMAGE's
    # build, so the image already built is the one to push (no second build here).
    config = copy_project(project_dir, tmp_path)
    config.write_text(
        config.read_text()
        + f"registry: {registry.address}/team\nsigning:\n  verify: keys/cosign.pub\n"
    )
    env = {**registry.env(), "COSIGN_PASSWORD": KEY_PASSWORD}
    (tmp_path / "keys").mkdir()
    subprocess.run(["cosign", "generate-key-pair"], cwd=tmp_path / "keys", env=env, check=True)
    outputs: list[str] = []

    def run(*args: str, **kw: object) -> tuple[int, str]:
        done = envkit(*args, cwd=tmp_path, env={**env, **kw.get("env", {})})  # type: ignore[dict-item]
        outputs.append(done.stdout + done.stderr)
        return done.returncode, done.stdout + done.stderr

    pushed_id = _image_id(ENV_IMAGE)
    assert pushed_id is not None
    shared = f"{registry.address}/team/{E2E_NAME}"
    try:
        anonymous = envkit("push", cwd=tmp_path, env={"DOCKER_CONFIG": str(tmp_path / "none")})
        outputs.append(anonymous.stdout + anonymous.stderr)
        assert anonymous.returncode != 0
        assert f"`docker login {registry.address}`" in anonymous.stderr, anonymous.stderr

        code, said = run("push", "--sign", "keys/cosign.key")
        assert code == 0, said
        tag = re.search(rf"pushed {re.escape(shared)}:(ctx-[0-9a-f]{{24}})", said)
        assert tag, said
        by_digest = re.search(rf"by digest: ({re.escape(shared)}@sha256:[0-9a-f]{{64}})", said)
        assert by_digest, said
        assert f"signed {by_digest.group(1)}" in said, said
        _signed_with_statements(by_digest.group(1), tmp_path, env, tag.group(1))
        code, said = run("k8s", "render", "--out", str(tmp_path / "k8s"))
        assert code == 0, said
        job = (tmp_path / "k8s" / "job.yaml").read_text()
        assert f'image: "{by_digest.group(1)}"' in job, "pods pull what was pushed, by digest"

        for ref in (ENV_IMAGE, f"{shared}:{tag.group(1)}", f"{shared}:latest"):
            removed = docker("rmi", ref, check=False)
            # Once in a full run the last name would not go: say what held the image.
            holders = docker("ps", "-a", "--filter", f"ancestor={pushed_id}", check=False)
            assert removed.returncode == 0, f"{ref}: {removed.stderr}\nheld by: {holders.stdout}"
        assert _image_id(pushed_id) is None, "the pushed image is gone from the engine"

        code, said = run("up")
        assert code == 0, said
        assert f"pulling {shared}:{tag.group(1)}" in said and f"{E2E_NAME}: healthy" in said
        assert "building" not in said and "Step " not in said, "no build step ran"
        assert _image_id(ENV_IMAGE) == pushed_id, "the image pulled is the image pushed"

        code, said = run("verify", "--no-bench", "--no-history", "--target", f"docker://{E2E_NAME}")
        assert code == 0, said

        # Same inputs, so `envkit build` pulls nothing new and builds nothing: the local image
        # is already the registry's.
        code, said = run("build")
        assert code == 0 and "pulled from" in said, said

        code, said = run("down")
        assert code == 0, said
        _a_local_copy_from_no_registry_gives_way_to_the_signed_one(run, pushed_id)
        _unsigned_under_the_same_tag_is_refused(run, f"{shared}:{tag.group(1)}", env)
    finally:
        envkit("down", "--volumes", "--yes", cwd=tmp_path, env=env)
        if _image_id(KEPT) is not None:
            docker("tag", KEPT, ENV_IMAGE, check=False)
            docker("rmi", KEPT, check=False)
        docker("rmi", UNSIGNED, check=False)
        if _image_id(ENV_IMAGE) is None:  # leave the session's image as it was found
            envkit("pull", cwd=tmp_path, env=env)
        for ref in docker("images", "--format", "{{.Repository}}:{{.Tag}}", shared).stdout.split():
            docker("rmi", ref, check=False)  # the registry's names; ENV_IMAGE's stays
    assert not any(registry.password in text for text in outputs), "a credential was printed"
    assert not any(KEY_PASSWORD in text for text in outputs), "the key's password was printed"


KEY_PASSWORD = "e2e-key-password-never-shown"
KEPT = f"envkit-test/kept-while-unsigned:{E2E_NAME}"
UNSIGNED = f"envkit-test/unsigned:{E2E_NAME}"


def _signed_with_statements(reference: str, folder: Path, env: dict[str, str], tag: str) -> None:
    """cosign's own CLI accepts the signature, and the SBOM and provenance attached to the very
    digest, signed by the same key."""
    offline = ["--key", "keys/cosign.pub", "--private-infrastructure=true"]
    checked = subprocess.run(
        ["cosign", "verify", *offline, reference],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr
    digest = reference.split("@sha256:")[1]
    statements = {}
    for kind in ("cyclonedx", "slsaprovenance1"):
        found = subprocess.run(
            ["cosign", "verify-attestation", *offline, "--type", kind, reference],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
        )
        assert found.returncode == 0, found.stderr
        envelope = json.loads(found.stdout.splitlines()[0])
        statements[kind] = json.loads(base64.b64decode(envelope["payload"]))
        assert statements[kind]["subject"][0]["digest"]["sha256"] == digest
    sbom = statements["cyclonedx"]["predicate"]
    names = {component["name"] for component in sbom["components"]}
    assert {"openssh-server", "torch"} <= names, sorted(names)[:20]
    provenance = statements["slsaprovenance1"]["predicate"]
    assert provenance["buildDefinition"]["externalParameters"]["inputs"] == tag
    assert provenance["buildDefinition"]["resolvedDependencies"][0]["digest"]["sha256"]


def _a_local_copy_from_no_registry_gives_way_to_the_signed_one(
    run: Callable[..., tuple[int, str]], pushed_id: str
) -> None:
    """An image of the same inputs under the image's name that came from no registry (as a
    `docker load` or a build by hand leaves one) is not trusted by `up`: it takes the registry's
    signed image instead, and starts that."""
    copied = subprocess.run(
        ["docker", "build", "-q", "--label", f"{TEST_LABEL}=copy", "-t", ENV_IMAGE, "-"],
        input=f"FROM {ENV_IMAGE}\nLABEL io.envkit.test.copy=1\n", text=True,
        capture_output=True, env={**os.environ, "DOCKER_BUILDKIT": "0"}, check=True,
    )  # fmt: skip
    copy_id = _image_id(ENV_IMAGE)
    assert copy_id is not None and copy_id != pushed_id, copied.stderr
    code, said = run("up")
    assert code == 0, said
    assert "here is not trusted" in said and "came from no registry" in said, said
    assert _image_id(ENV_IMAGE) == pushed_id, "up runs the signed image, not the copy"
    code, said = run("down")
    assert code == 0, said
    docker("rmi", copy_id)


def _unsigned_under_the_same_tag_is_refused(
    run: Callable[..., tuple[int, str]], ref: str, env: dict[str, str]
) -> None:
    """Someone pushes another image under the signed tag: a member's `up` (no local image) and
    `pull` refuse it by its digest, and start nothing; an image from no registry is refused by
    `verify --image`."""
    empty = subprocess.run(["tar", "-cf", "-", "-T", "/dev/null"], capture_output=True, check=True)
    subprocess.run(["docker", "import", "-", UNSIGNED], input=empty.stdout, check=True)
    docker("tag", UNSIGNED, ref)
    subprocess.run(["docker", "push", ref], env={**os.environ, **env}, check=True)
    pushed = docker("image", "inspect", "-f", "{{index .RepoDigests 0}}", ref).stdout.strip()
    docker("rmi", ref)
    docker("tag", ENV_IMAGE, KEPT)
    docker("rmi", ENV_IMAGE)  # a member's machine: nothing local, so up goes to the registry
    for command in ("up", "pull"):
        code, said = run(command)
        assert code == 2, said
        assert f"signing.verify: {pushed} carries no signature" in said, said
    assert _image_id(ENV_IMAGE) is None and _image_id(ref) is None, "nothing unsigned was kept"
    running = docker("ps", "-q", "--filter", f"name={E2E_NAME}").stdout.strip()
    assert not running, "up started nothing"
    code, said = run("verify", "--image", UNSIGNED)
    assert code == 2 and "came from no registry" in said, said


def test_a_registry_that_is_not_one_is_refused_before_the_engine(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text("name: demo\nregistry: 'my registry'\n")
    done = envkit("push", cwd=tmp_path, env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert done.returncode == 2, done.stderr
    assert "registry" in done.stderr and "HOST[:PORT][/PATH]" in done.stderr
    (tmp_path / "envkit.yaml").write_text("name: demo\n")
    bad = envkit("pull", "--registry=-oProxyCommand=x", cwd=tmp_path)
    assert bad.returncode != 0 and "is not a registry" in bad.stderr, bad.stderr
    unset = envkit("push", cwd=tmp_path)
    assert unset.returncode != 0 and "set registry: in envkit.yaml" in unset.stderr
