"""Whole-image locks: capture what a built image holds (`envkit lock`), turn a lock into pins for
a rebuild (`envkit build --locked`), and compare locks with each other or with a target.

May import: checks, plan, engine, targets, verify, files, names, platforms, errors."""
