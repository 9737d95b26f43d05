# envkit's task runner. `make demo` and `make test` each do all their own set-up on a fresh
# machine: the venv, the Python dev tools, and the system tools the tests drive.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: venv system-deps buildx cosign engine-storage lint test golden demo bench clean

# uv installs the dev tools in seconds where pip took about two minutes here (uv is one of them,
# pinned in pyproject.toml); pip installs them where uv cannot.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "$$(grep -o '"uv==[^"]*"' pyproject.toml | tr -d '"')"
	$(VENV)/bin/uv pip install --quiet --python $(PY) -e '.[dev]' \
	  || $(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# Tools the tests run for real, from Debian's packages when missing: docker-compose (validates
# rendered compose files), ssh/ssh-keygen (keys, real logins), mmdebstrap (the test base image,
# since no registry is reachable), and a CPU torch with pytest for the system Python
# (`envkit verify --local` and the checks' honesty tests run on it), and a headless Chromium with
# its WebDriver (the HTML report is opened and inspected in a real browser), and Slurm with munge
# (a private cluster on this machine runs `envkit verify --slurm` and `envkit health` for real),
# and the engines and registry of the sharing tests: Debian's docker-registry with htpasswd
# (apache2-utils), Podman's API service (podman, catatonit: its init), and an sshd in front of it,
# and zsh and fish, whose completion of envkit is tested in the real shells; and Charliecloud with
# squashfs-tools and squashfuse, which make and run an offline bundle's SquashFS (envkit bundle),
# and siftool, which wraps it as Apptainer's SIF (envkit bundle --sif); pigz, which ch-convert
# uses in place of gzip where it is installed (the image's export compressed on every core).
SYSTEM_PACKAGES := docker-compose openssh-client mmdebstrap python3-torch python3-numpy python3-pytest \
	chromium chromium-driver slurm-wlm munge \
	docker-registry apache2-utils podman catatonit openssh-server zsh fish \
	prometheus prometheus-node-exporter qemu-user-static binfmt-support arch-test \
	charliecloud charliecloud-runtime squashfs-tools squashfuse siftool pigz
system-deps:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(SUDO) apt-get update -q && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

# BuildKit's client, the `docker buildx` CLI plugin (envkit's default builder where it is found).
# Debian 12 has no docker-buildx package; Debian 13's is one static binary that needs only libc
# and works with this engine. It comes from Debian's archive like any other package, checked
# against the sha256 that trixie's Packages index lists for it.
BUILDX_VERSION := 0.13.1+ds1-3
BUILDX_POOL    := https://deb.debian.org/debian/pool/main/d/docker-buildx
BUILDX_SHA256_amd64 := fcf8c48204d1603c8f209451d7827eb91bf30759578baf7704e9e1a87e5f1d7f
BUILDX_SHA256_arm64 := 6cf361ab892b55753b728adcbd1a99f0616711df853dba64a5297a4a676d96b0
buildx:
	@if docker buildx version >/dev/null 2>&1; then exit 0; fi; \
	arch=$$(dpkg --print-architecture); \
	case $$arch in amd64) sum=$(BUILDX_SHA256_amd64) ;; arm64) sum=$(BUILDX_SHA256_arm64) ;; \
	  *) echo "no pinned docker-buildx for $$arch: install it yourself, or use --builder classic"; exit 1 ;; esac; \
	deb="$(VENV)/docker-buildx_$(BUILDX_VERSION)_$$arch.deb"; \
	mkdir -p $(VENV) && curl -fsSL -o "$$deb" "$(BUILDX_POOL)/docker-buildx_$(BUILDX_VERSION)_$$arch.deb" \
	  && echo "$$sum  $$deb" | sha256sum -c --quiet - \
	  && $(SUDO) dpkg -i "$$deb" && docker buildx version

# cosign signs and verifies the team's image (`envkit push --sign`, `signing.verify`): Debian
# 13's package, one static binary like buildx's, checked against trixie's Packages index.
COSIGN_VERSION := 2.5.0-2+b5
COSIGN_POOL    := https://deb.debian.org/debian/pool/main/c/cosign
COSIGN_SHA256_amd64 := 3b6eadd27f3c4c00bfa7eab5c2397a6a15a763630c7a1d40d06ff60d24799eef
COSIGN_SHA256_arm64 := 158915eb65c7e024f596958972d76e7feef25355ffaa0dd57d27afb969103028
cosign:
	@if cosign version >/dev/null 2>&1; then exit 0; fi; \
	arch=$$(dpkg --print-architecture); \
	case $$arch in amd64) sum=$(COSIGN_SHA256_amd64) ;; arm64) sum=$(COSIGN_SHA256_arm64) ;; \
	  *) echo "no pinned cosign for $$arch: install it yourself"; exit 1 ;; esac; \
	deb="$(VENV)/cosign_$(COSIGN_VERSION)_$$arch.deb"; \
	mkdir -p $(VENV) && curl -fsSL -o "$$deb" "$(COSIGN_POOL)/cosign_$(COSIGN_VERSION)_$$arch.deb" \
	  && echo "$$sum  $$deb" | sha256sum -c --quiet - \
	  && $(SUDO) dpkg -i "$$deb" && cosign version >/dev/null

# An empty engine that stores layers with fuse-overlayfs is put on the kernel's overlay2 first,
# where the kernel mounts it (scripts/engine_storage.py: the same build took 92 s on one and 49 s
# on the other here); an engine that holds anything is left as it is, and says so.
engine-storage:
	@$(PYTHON) scripts/engine_storage.py

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The unit and checks tests (CPU-bound, no engine) on two workers; the engine's tests on two
# workers too, each taking whole files, longest first (tests/e2e/workers.py: each worker's
# names and ports are its own; the shared bases are made once and kept by tag).
test: engine-storage venv system-deps buildx cosign lint
	@# bytecode once: where PYTHONDONTWRITEBYTECODE is set (CI), every `python -m envkit` the
	@# tests start would compile envkit's modules again (about a fifth of a render's CPU)
	$(PY) -m compileall -q -j 0 envkit tests
	$(PY) -m pytest -n 2 --durations=15 tests/unit tests/checks
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=25 tests/e2e

# Regenerate golden files after an intended template change; review the diff before committing.
golden: venv
	ENVKIT_REGEN_GOLDEN=1 $(PY) -m pytest -q tests/unit/test_golden.py tests/unit/test_k8s.py
	git --no-pager diff --stat -- tests/golden tests/golden-k8s

# The main job end to end on the default example: render, build, up, verify, ssh, down.
demo: venv system-deps buildx cosign
	$(PY) scripts/demo.py

bench: venv system-deps buildx
	$(PY) benchmarks/bench_cli.py --json benchmarks/cli.json
	$(PY) benchmarks/bench_hostile.py --json benchmarks/hostile.json
	$(PY) benchmarks/bench_history.py --json benchmarks/history.json
	$(PY) benchmarks/bench_verify.py --json benchmarks/verify.json
	$(PY) benchmarks/bench_build.py --json benchmarks/build.json
	$(PY) benchmarks/bench_fleet.py --json benchmarks/fleet.json
	$(PY) benchmarks/bench_lock.py --json benchmarks/lock.json
	$(PY) benchmarks/bench_slurm.py --json benchmarks/slurm.json
	$(PY) benchmarks/bench_notebook.py --json benchmarks/notebook.json
	$(PY) benchmarks/bench_gpu_group.py --json benchmarks/gpu_group.json
	$(PY) benchmarks/bench_platforms.py --json benchmarks/platforms.json

clean:
	rm -rf $(VENV) .envkit-demo dist build .pytest_cache .mypy_cache .ruff_cache .hypothesis
