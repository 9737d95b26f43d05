"""Loaded by every Python started with this folder on PYTHONPATH (the runner and its workers):
applies the breakage named in ENVKIT_TEST_PLANT, so honesty tests exercise the real runner."""

import os

if os.environ.get("ENVKIT_TEST_PLANT"):
    import plants  # type: ignore[import-not-found]  # found through PYTHONPATH at run time

    plants.apply(os.environ["ENVKIT_TEST_PLANT"])
