"""`make demo`: the main job end to end on the default example.

render -> build -> up -> verify -> ssh login -> down, on examples/debian-bookworm-cpu, in
.envkit-demo/. Where `debian:bookworm` cannot be pulled (no registry reachable), the base is made
locally with mmdebstrap first, and the demo says so. Extra CA certificates the host trusts
(/usr/local/share/ca-certificates, e.g. a TLS-inspecting proxy's) are added to the config.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "debian-bookworm-cpu"
DEMO = REPO / ".envkit-demo"
BASE = "debian:bookworm"


def say(text: str) -> None:
    print(f"\n==> {text}", flush=True)


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    print("$", " ".join(args), flush=True)
    return subprocess.run(args, cwd=DEMO, check=check)


def ensure_base() -> None:
    if subprocess.run(["docker", "image", "inspect", BASE], capture_output=True).returncode == 0:
        return
    if subprocess.run(["docker", "pull", BASE], capture_output=True).returncode == 0:
        return
    say(f"no registry reachable: making {BASE} locally with mmdebstrap (about 2 minutes)")
    rootfs = subprocess.Popen(
        ["mmdebstrap", "--variant=minbase", "--include=ca-certificates", "bookworm", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    subprocess.run(
        ["docker", "import", "--change", 'CMD ["bash"]', "-", BASE],
        stdin=rootfs.stdout,
        check=True,
        capture_output=True,
    )
    assert rootfs.stdout is not None
    rootfs.stdout.close()
    if rootfs.wait() != 0:
        sys.exit("mmdebstrap failed")


def prepare() -> None:
    DEMO.mkdir(exist_ok=True)
    config = (EXAMPLE / "envkit.yaml").read_text()
    key = DEMO / "id_demo"
    if not key.exists():
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "envkit-demo", "-f", str(key)],
            check=True,
        )
    config = config.replace("[keys/lead.pub]", "[id_demo.pub]").replace(
        "port: 8825", "port: 8825\n  bind: 127.0.0.1"
    )
    cas = sorted(Path("/usr/local/share/ca-certificates").glob("*.crt"))
    if cas:
        for ca in cas:
            shutil.copy(ca, DEMO / ca.name)
        names = ", ".join(ca.name for ca in cas)
        config = config.replace(
            "  preset: official\n", f"  preset: official\n  ca_certificates: [{names}]\n"
        )
        say(f"this host trusts extra CAs ({names}); the demo config trusts them too")
    (DEMO / "envkit.yaml").write_text(config)


def main() -> None:
    envkit = str(Path(sys.executable).parent / "envkit")
    prepare()
    ensure_base()
    say("render: envkit.yaml -> .envkit-demo/.envkit/")
    run(envkit, "render")
    say("build: the image, step by step, through the docker SDK")
    run(envkit, "build")
    try:
        say("up: start the container and wait for sshd to be healthy")
        run(envkit, "up")
        say("verify: the checks suite inside the container")
        verified = run(
            envkit,
            "verify",
            "--json-file",
            "report.json",
            "--junit",
            "report.xml",
            "--html",
            "report.html",
            check=False,
        )
        say("ssh-config and a real login with the generated key")
        blocks = subprocess.run(
            [envkit, "ssh-config", "--identity", str(DEMO / "id_demo")],
            cwd=DEMO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (DEMO / "ssh_config").write_text(
            blocks + f"    UserKnownHostsFile {DEMO / 'known_hosts'}\n"
        )
        print(blocks)
        run(
            "ssh",
            "-F",
            str(DEMO / "ssh_config"),
            "-o",
            "BatchMode=yes",
            "bookworm-cpu",
            "echo logged in as $(id -un) on $(hostname); "
            "python -c 'import torch; print(\"torch\", torch.__version__)'",
        )
    finally:
        say("down: stop the container (homes, cache and host keys kept)")
        run(envkit, "down", check=False)
    print(f"\nreports: {DEMO / 'report.json'}, {DEMO / 'report.xml'}, {DEMO / 'report.html'}")
    sys.exit(verified.returncode)


if __name__ == "__main__":
    main()
