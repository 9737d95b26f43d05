"""`up` says when a login user cannot write the mounted project folder (issue 47): a lab
server's project owned by root, the login user uid 1000, is said with the fix, never found out
in the container; a folder the user owns, or one its group may write, says nothing."""

from __future__ import annotations

from pathlib import Path

from envkit.commands.up import unwritable
from envkit.plan.box.access import Service


def _service(uid: int, gid: int, name: str = "dev") -> Service:
    return Service(name, f"proj-{name}", None, name, uid, gid, 8822, "keys/proj", ())


def test_a_folder_the_login_user_cannot_write_is_said_with_the_fix(tmp_path: Path) -> None:
    owner = tmp_path.stat()
    other = owner.st_uid + 1000
    tmp_path.chmod(0o755)
    notes = unwritable(tmp_path, (_service(other, owner.st_gid + 1000),))
    assert len(notes) == 1, notes
    assert f"dev (uid {other}) in proj-dev cannot write the workspace {tmp_path}" in notes[0]
    assert f"set ssh.uid: {owner.st_uid} and ssh.gid: {owner.st_gid}" in notes[0]
    assert "mode 755" in notes[0]


def test_an_owner_or_a_group_that_may_write_is_not_said(tmp_path: Path) -> None:
    info = tmp_path.stat()
    tmp_path.chmod(0o775)
    services = (
        _service(info.st_uid, info.st_gid + 7, "owner"),
        _service(info.st_uid + 1000, info.st_gid, "group"),
    )
    assert unwritable(tmp_path, services) == []
    tmp_path.chmod(0o755)
    assert [n.split(" in ")[1].split()[0] for n in unwritable(tmp_path, services)] == ["proj-group"]
