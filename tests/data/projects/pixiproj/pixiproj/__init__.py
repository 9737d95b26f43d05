"""envkit's e2e pixi project: imports what its pixi.lock installed (a conda package, a PyPI
package) beside the base's torch."""

import envkit_hello
import envkit_probe
import torch

__all__ = ["envkit_hello", "envkit_probe", "torch"]
