"""Past one machine: the checks suite run through a cluster's own scheduler (Kubernetes
manifests rendered here, their reports merged back into envkit's usual report).

May import: checks, config, plan, render, verify, files, platforms, processes, errors."""
