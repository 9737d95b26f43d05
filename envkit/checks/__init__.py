"""envkit's verification suite. Imports only the standard library and torch (numpy optional), so
it can be shipped as one zip into any image with python+torch and run there without envkit.

Check ids are a contract: groups cuda.*, tensor.*, autograd.*, multigpu.*, system.*, bench.*.

May import: nothing of envkit; the standard library and torch only, since it runs from a
zip inside any image."""

SCHEMA_VERSION = 1
