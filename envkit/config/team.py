"""The `team:` section: its members (keys, ports, GPUs and limits), how they share the server,
and when an idle member's container stops."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, WithJsonSchema, model_validator

from envkit.config.choices import TeamMode
from envkit.config.fields import AccountId, GpuRequest, MemorySize, Port, Strict, UserName
from envkit.durations import parse_duration
from envkit.errors import FieldError


def _idle_seconds(value: object) -> float:
    # A few seconds at least: the watch in the container looks every few seconds, and a member
    # woken by `ssh` needs time to log in before the timer runs out again.
    return parse_duration(str(value), low_s=3, high_s=30 * 86400)


IdleStop = Annotated[
    float,
    BeforeValidator(_idle_seconds),
    WithJsonSchema({"type": ["string", "integer"], "description": "a duration: 90s, 30m, 2h, 1d"}),
]


class Member(Strict):
    """One team member: their login name, keys, and optionally their own port and UID."""

    name: UserName = Field(description="Login name (per-member mode) and label.")
    keys: tuple[str, ...] = Field(min_length=1, description="One or more public key lines.")
    port: Port | None = Field(
        None,
        description="Per-member mode: its host port. Default: derived from the name, in "
        "ssh.port+1..ssh.port+1000, so it never moves when others join or leave.",
    )
    uid: AccountId | None = Field(None, description="Default: ssh.uid, else yours.")
    gpus: GpuRequest | None = Field(
        None,
        description="Per-member mode: this member's GPUs, as device ids or GPU-UUIDs ([0, 1]), "
        "a count (given free GPUs of the host at `envkit up`), or none. Default: runtime.gpus. "
        "No two members share one unless team.share_gpus.",
    )
    cpus: float | None = Field(None, gt=0, le=1024, description="Per-member mode: its CPUs.")
    memory: MemorySize | None = Field(None, description="Per-member mode: e.g. '64g'.")


class Team(Strict):
    """A team sharing one image: one container for all, or one per member."""

    mode: TeamMode = Field(
        "shared", description="shared: one container for all; per-member: one each, same image."
    )
    members: tuple[Member, ...] = Field((), description="The team's members.")
    share_gpus: bool = Field(
        False,
        description="Allow members' GPU lists to overlap (their jobs then share those GPUs' "
        "memory and time).",
    )
    idle_stop: IdleStop | None = Field(
        None,
        description="Stop a container after this long with no SSH session, no busy notebook "
        "kernel and no GPU activity (e.g. '2h'); its next `ssh` or `envkit up` starts it.",
    )

    @model_validator(mode="after")
    def _unique_names(self) -> Team:
        names = [m.name for m in self.members]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise FieldError(
                f"member names repeat: {', '.join(dupes)}", "give each member a unique name"
            )
        return self
