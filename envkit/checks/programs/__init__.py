"""Programs that run inside a target besides the suite itself: the suite's own run, node health,
the cross-node collective, the installed-state capture for locks, a team's pytest checks, and
the probes two checks hand to another interpreter's `-c` (the notebook kernel, pip's index)."""
