"""Talking to the Docker engine: building images, running the environment's containers.

May import: plan, checks, addresses, platforms, processes, errors."""
