"""Programs that run inside a target besides the suite itself: the suite's own run, node health,
the cross-node collective, the installed-state capture for locks, and a team's pytest checks."""
