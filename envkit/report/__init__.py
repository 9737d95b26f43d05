"""Reports of verification results: a readable table, JSON, JUnit XML, an HTML page.

May import: checks, verify, render, errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envkit.checks.suite import GROUPS

if TYPE_CHECKING:
    from envkit.checks.core.contract import CheckResult


_GROUP_RANK = {group: rank for rank, group in enumerate((*GROUPS, "user"))}


def check_order(check: CheckResult) -> int:
    """A sort key: groups in contract order, users' checks last. Sorting is stable, so within a
    group checks keep the order the runner ran them in."""
    return _GROUP_RANK.get(check["group"], len(_GROUP_RANK))
