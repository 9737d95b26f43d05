"""Reports of verification results: a readable table, JSON, JUnit XML, an HTML page."""

from typing import Any

from envkit.checks.registry import GROUPS

_GROUP_RANK = {group: rank for rank, group in enumerate((*GROUPS, "user"))}


def check_order(check: dict[str, Any]) -> int:
    """A sort key: groups in contract order, users' checks last. Sorting is stable, so within a
    group checks keep the order the runner ran them in."""
    return _GROUP_RANK.get(check["group"], len(_GROUP_RANK))
