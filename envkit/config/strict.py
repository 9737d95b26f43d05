"""The base of every envkit.yaml section: frozen, and an unknown key is an error (a typo in a
field name must not pass silently)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
