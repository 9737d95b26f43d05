"""envkit: one command from a short envkit.yaml to a running, verified GPU dev environment."""

__version__ = "0.1.0"
