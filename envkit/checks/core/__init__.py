"""The framework: a check's contract, registration, context and devices, and the isolated run
(a parent session feeding a worker process)."""
