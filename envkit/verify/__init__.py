"""Verification orchestration: ship the checks bundle to targets, run it there under a deadline,
gather the reports. The checks themselves live in envkit/checks (standard library + torch only).

May import: checks, targets, plan, config, errors."""
