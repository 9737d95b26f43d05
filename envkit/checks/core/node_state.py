"""What a node remembers between envkit runs, kept where the GPUs are (the history store lives
on the operator's machine; a Slurm health program runs where there is none): how far the
kernel log was read (so an XID is reported once), the node's own healthy topology, its
baseline (suite/topology.py), and its time out of service (programs/health.py). One small JSON
file, written whole (a temporary file renamed into place); a file that cannot be read or
written costs a note, never a verdict.

Where: $ENVKIT_NODE_STATE, else /var/lib/envkit/node-state.json for root, else
$XDG_STATE_HOME/envkit/node-state.json. Standard library only; Python 3.8 syntax."""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any, Dict, Optional

ENV = "ENVKIT_NODE_STATE"
VERSION = 1
LIMIT = 1 << 20  # a state file past this is not one envkit wrote


def now() -> str:
    """A moment the node records, as a report's started_at is written (UTC, to the second)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def default_path() -> str:
    if chosen := os.environ.get(ENV):
        return chosen
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return "/var/lib/envkit/node-state.json"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(base, "envkit", "node-state.json")


class NodeState:
    def __init__(self, path: Optional[str] = None) -> None:
        self.path = path or default_path()
        self.data: Dict[str, Any] = {"version": VERSION}
        self.note = ""  # why the file could not be read, when it could not
        try:
            if os.path.getsize(self.path) > LIMIT:
                raise ValueError(f"larger than {LIMIT} bytes")
            with open(self.path) as handle:
                loaded = json.load(handle)
            if not isinstance(loaded, dict) or loaded.get("version") != VERSION:
                raise ValueError("not a node state envkit wrote")
            self.data = loaded
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            self.note = f"node state {self.path} not read ({exc}); starting afresh"

    @property
    def cursor(self) -> Optional[Dict[str, Any]]:
        found = self.data.get("kmsg")
        return found if isinstance(found, dict) else None

    @property
    def baseline(self) -> Optional[Dict[str, Any]]:
        found = self.data.get("baseline")
        return found if isinstance(found, dict) else None

    @property
    def service(self) -> Dict[str, Any]:
        """When and why `health --drain` took the node out of service, the clean burn-in since
        (suite/topology.py), and when and after which burn-in it returned."""
        if not isinstance(self.data.get("service"), dict):
            self.data["service"] = {}
        found: Dict[str, Any] = self.data["service"]
        return found

    def save(self) -> str:
        """Writes the file; "" or why it could not be written."""
        partial = f"{self.path}.partial-{os.getpid()}"
        try:
            if folder := os.path.dirname(self.path):
                os.makedirs(folder, exist_ok=True)
            with open(partial, "w") as handle:
                json.dump(self.data, handle, indent=1, sort_keys=True)
            os.replace(partial, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            return f"node state {self.path} not written ({exc.strerror or exc})"
        return ""
