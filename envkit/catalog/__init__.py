"""Data envkit decides with: the CUDA/PyTorch compatibility table and the mirror presets.

May import: errors."""
