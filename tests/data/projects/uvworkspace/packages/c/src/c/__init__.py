"""Member c: only behind the root's `tools` extra, with a dependency by path."""
