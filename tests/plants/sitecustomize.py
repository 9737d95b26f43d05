"""Loaded by every Python started with this folder on PYTHONPATH (the runner and its workers):
applies the breakages named in ENVKIT_TEST_PLANT, so honesty tests exercise the real runner.

kmsg_from_env, which every stand-in GPU test sets, patches no torch: it is applied here, and
plants.py (which imports torch) is loaded only for the others. The runner's own process and an
"after" checks worker then start without torch, as they do outside the tests (importing it
in each cost every GPU test over a second of CPU, twice)."""

import os

PLANTED = [name for name in os.environ.get("ENVKIT_TEST_PLANT", "").split(",") if name]

if "kmsg_from_env" in PLANTED:
    # The kernel log the watch reads, the uptime and the boot id its window is judged by:
    # files the test wrote, never the host's own.
    from envkit.checks.core import kernel_log

    kernel_log.KMSG = os.environ.get("ENVKIT_TEST_KMSG", "/nonexistent/envkit-test-kmsg")
    kernel_log.UPTIME = os.environ.get("ENVKIT_TEST_UPTIME", "/nonexistent/envkit-test-uptime")
    kernel_log.BOOT_ID = os.environ.get("ENVKIT_TEST_BOOT_ID", "/nonexistent/envkit-test-boot")

if [name for name in PLANTED if name != "kmsg_from_env"]:
    import plants  # type: ignore[import-not-found]  # found through PYTHONPATH at run time

    plants.apply(",".join(name for name in PLANTED if name != "kmsg_from_env"))
