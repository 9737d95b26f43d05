"""What several commands share: the project loaded, planned and rendered; the team's image in
its registry (its signature checked where the team signs it); which container a command means;
the host's GPUs for members; the containers' state for `status` and `metrics`; members' homes
backed up and restored. What one command alone uses lives beside that command in
envkit/commands/.

May import: supply, lock, cluster, history, report, verify, targets, engine, render, plan, config,
checks, catalog, files, names, durations, addresses, platforms, errors.
"""
