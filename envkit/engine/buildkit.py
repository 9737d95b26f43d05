"""BuildKit, through `docker buildx build --load`: cache mounts (so a rebuilt layer downloads
nothing it already has), and the engine's own image store (the `docker` driver: no registry,
local base images). Its plain progress output becomes the same events the classic builder's
stream does:

    #7 [stage-0 3/9] RUN --mount=type=cache,... apt-get update   -> step 3 of 9
    #7 0.345 Get:1 http://deb.debian.org ...                     -> a log line of step 3
    #7 CACHED                                                    -> step 3 came from the cache
    #7 ERROR: process "/bin/bash -o pipefail -c ..." did not complete successfully: exit code: 100
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from envkit.engine.build import BuildOptions, BuildProgress, Reporter, begin_step, fail, finish
from envkit.errors import EngineUnreachableError, EnvkitError
from envkit.plan.image.install import DOCKERFILE

VERTEX = re.compile(r"^#(\d+) (.*)$")
STEP = re.compile(r"^\[(?:[^\]\s]+ )?\s*(\d+)/(\d+)\] (.*)$")
LOG = re.compile(r"^\d+\.\d+ ?(.*)$")
EXPORTED = re.compile(r"^exporting layers ([0-9.]+)s done$")
DONE = re.compile(r"^DONE ([0-9.]+)s$")
MOUNT_FLAGS = re.compile(r"^RUN\s+(?:--mount=\S+\s+(?:\\\s+)?)+")  # RUN's own flags only
# What the CLI says when the engine, not the Dockerfile, failed the build.
ENGINE_GONE = re.compile(
    r"Cannot connect to the Docker daemon|error during connect|connection reset by peer|"
    r"connection refused|broken pipe|unexpected EOF|\bEOF\b|code = Unavailable|"
    r"closing transport|error reading from server",
    re.IGNORECASE,
)
CANCEL_WAIT_S = 20  # for the CLI to cancel the build in the engine after Ctrl-C


def shown(instruction: str) -> str:
    """The instruction without its cache-mount flags or line-continuation runs of blanks: what
    it does, readable in a progress line (the text the classic builder shows for that step)."""
    return " ".join(MOUNT_FLAGS.sub("RUN ", instruction).split())


@dataclass
class PlainOutput:
    """Parser state for one build's plain progress. BuildKit checks its cache for many steps at
    once and prints their headers out of order, each followed later by CACHED or by its run.
    Steps are reported in order, each once it is settled (cached, or running), so every
    "(cached)" lands under its own step."""

    progress: BuildProgress = field(default_factory=BuildProgress)
    steps: dict[int, int] = field(default_factory=dict)  # vertex -> step
    headers: dict[int, str] = field(default_factory=dict)  # step -> instruction
    settled: dict[int, bool] = field(default_factory=dict)  # step -> came from the cache
    reported: int = 0  # steps 1..reported have been reported
    error: str | None = None  # the failing step's error line
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=15))  # any line, for the rest

    def line(self, text: str, report: Reporter) -> None:
        text = text.rstrip()
        if text:
            self.tail.append(text)
        vertex = VERTEX.match(text)
        if vertex is None:
            return
        number, rest = int(vertex.group(1)), vertex.group(2)
        if (step := STEP.match(rest)) is not None:
            index = int(step.group(1))
            self.steps[number] = index
            self.headers[index] = shown(step.group(3))
            self.progress.total = int(step.group(2))
            return
        if number not in self.steps:
            if exported := EXPORTED.match(rest):
                self.progress.export_s = float(exported.group(1))
            return  # BuildKit's own work: loading the Dockerfile, the context, metadata
        index = self.steps[number]
        if rest == "CACHED":
            self.settled.setdefault(index, True)
            self._catch_up(report)
            return
        self._running(index, report)
        if done := DONE.match(rest):  # BuildKit's own figure for the step's run
            self.progress.measured[index] = float(done.group(1))
        if rest.startswith("ERROR: "):
            self.error = rest.removeprefix("ERROR: ")
        elif not rest.startswith(("DONE ", "CANCELED")):
            logged = LOG.match(rest)
            out = logged.group(1) if logged else rest
            self._enter(index)
            self.progress.log.append(out)
            report("output", self.progress, out)

    def _running(self, index: int, report: Reporter) -> None:
        # A step runs only after every step before it is done: those are settled too.
        for earlier in range(1, index + 1):
            self.settled.setdefault(earlier, False)
        self._catch_up(report)
        self._enter(index)

    def _catch_up(self, report: Reporter) -> None:
        while self.reported + 1 in self.settled:
            self.reported += 1
            index = self.reported
            begin_step(self.progress, index, self.headers.get(index, ""), report)
            if self.settled[self.reported]:
                self.progress.cached.add(self.reported)
                report("cached", self.progress, "")

    def _enter(self, index: int) -> None:
        self.progress.step, self.progress.instruction = index, self.headers.get(index, "")


def buildx_command(
    context: Path, dockerfile: str, options: BuildOptions, iidfile: Path
) -> list[str]:
    argv = ["docker", "buildx", "build", "--load", "--progress=plain"]
    argv += ["--file", str(context / dockerfile), "--tag", options.tag, "--iidfile", str(iidfile)]
    if options.no_cache:
        argv.append("--no-cache")
    if options.platform:
        argv += ["--platform", options.platform]
    if options.network:
        argv += ["--network", options.network]
    for key, value in sorted(options.labels.items()):
        argv += ["--label", f"{key}={value}"]
    for key, value in sorted(options.build_args.items()):
        argv += ["--build-arg", f"{key}={value}"]
    for ref in options.cache_from:
        argv += ["--cache-from", f"type=registry,ref={ref}"]
    if options.cache_from:  # the image carries its cache's metadata: pushed, it serves the next
        argv += ["--cache-to", "type=inline"]
    for secret, source in options.secrets.items():  # mounted by RUN steps, never in a layer
        argv += ["--secret", f"id={secret},src={source}"]
    return [*argv, "--", str(context)]


def build_with_buildkit(context: Path, options: BuildOptions, report: Reporter) -> BuildProgress:
    parsed = PlainOutput()
    with tempfile.TemporaryDirectory(prefix="envkit-buildx-") as scratch:
        iidfile = Path(scratch) / "iid"
        argv = buildx_command(context, DOCKERFILE, options, iidfile)
        env = {**os.environ, "BUILDX_NO_DEFAULT_ATTESTATIONS": "1", "DOCKER_CLI_HINTS": "false"}
        try:
            # Its own session: a Ctrl-C here is forwarded once, as a cancel, and the CLI is
            # waited for, so the engine is never left building for nobody.
            process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise EnvkitError(f"could not run the Docker CLI: {exc}", "install docker") from None
        try:
            assert process.stdout is not None
            for text in process.stdout:
                parsed.line(text, report)
            returncode = process.wait()
        except BaseException:
            _cancel(process)
            raise
        if returncode == 0:
            with contextlib.suppress(OSError):
                parsed.progress.image_id = iidfile.read_text().strip() or None
    if returncode != 0:
        _failed(parsed)
    finish(parsed.progress, report)
    return parsed.progress


def _cancel(process: subprocess.Popen[str]) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGINT)  # the CLI cancels the build in the engine
    try:
        process.wait(timeout=CANCEL_WAIT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _failed(parsed: PlainOutput) -> None:
    tail = list(parsed.tail)
    final = next((t for t in reversed(tail) if t.startswith("ERROR:")), tail[-1] if tail else "")
    if parsed.error is None and ENGINE_GONE.search("\n".join(tail)):
        raise EngineUnreachableError(
            f"the Docker engine broke off the build: {final.removeprefix('ERROR: ')}",
            "check the engine (`docker info`, `journalctl -u docker`), then `envkit build` again",
        )
    if parsed.error is None:  # before any step ran: the Dockerfile, the context, the base
        parsed.progress.log.extend(t for t in tail if not t.startswith("ERROR:"))
    fail(parsed.progress, parsed.error or final.removeprefix("ERROR: "))
