"""Render a Plan into files: the build context (Dockerfile, compose, mirror configs, runtime
scripts) and the project (editor configs beside envkit.yaml).

May import: plan, runtime, addresses, errors."""
