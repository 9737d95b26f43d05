"""Shell completion of names that come from envkit.yaml (team members, containers): read from the
config the command line names (--config, else $ENVKIT_CONFIG, else ./envkit.yaml). Completion
must never print an error into the user's shell: any problem completes nothing."""

from __future__ import annotations

import typer


def members(ctx: typer.Context, incomplete: str) -> list[str]:
    try:
        from envkit.services.project import load_project

        names = load_project(ctx.params.get("config")).plan.members
    except Exception:  # no config, or a broken one: nothing to offer, and no error in the shell
        return []
    return [name for name in names if name.startswith(incomplete)]


def targets(ctx: typer.Context, incomplete: str) -> list[str]:
    try:
        from envkit.commands.ssh_config import target_urls

        urls = target_urls(ctx.params.get("config"))
    except Exception:  # as above: a broken config completes nothing, quietly
        return []
    return [url for url in urls if url.startswith(incomplete)]


def checks(ctx: typer.Context, incomplete: str) -> list[str]:
    """verify's --only/--skip: the groups and every check id (the suite's own registry)."""
    try:
        from envkit.checks.core.registry import CHECKS
        from envkit.checks.suite import GROUPS, load

        load()
        names = [*GROUPS, *sorted(CHECKS)]
    except Exception:  # as above: completion never prints an error into the shell
        return []
    return [name for name in names if name.startswith(incomplete)]
