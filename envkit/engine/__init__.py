"""Talking to the Docker engine: building images, running the environment's containers."""
