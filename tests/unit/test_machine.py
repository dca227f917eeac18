"""Which machine this is: an id made once in the config folder (owner-only), and a readable name (issue 32 item 3)."""

from __future__ import annotations

import os
import stat
import uuid

from desktop_memory.config import Settings
from desktop_memory.machine import machine_id, machine_id_path, machine_name, this_machine


def test_the_id_is_made_once_private_and_kept(monkeypatch, tmp_path):
    first = machine_id()
    path = machine_id_path()
    assert path.is_file() and str(uuid.UUID(path.read_text().strip())) == first
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert machine_id() == first  # read back, not made again
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".machine-id")]  # no temp file left
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(tmp_path / "other-config"))
    assert machine_id() != first  # two config folders are two machines


def test_a_file_that_is_not_an_id_is_left_alone(tmp_path):
    path = machine_id_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not an id\n")
    found = machine_id()
    assert str(uuid.UUID(found)) == found
    assert machine_id() == found  # stable (derived from the host name)
    assert path.read_text() == "not an id\n"


def test_the_name_is_the_setting_else_the_host_name(monkeypatch):
    import socket

    monkeypatch.setattr(socket, "gethostname", lambda: "desktop.example.org")
    assert machine_name(Settings()) == "desktop"
    assert machine_name(Settings(machine_name="  Laptop ")) == "Laptop"
    assert this_machine(Settings(machine_name="Laptop"))[1] == "Laptop"


def test_a_config_folder_that_cannot_be_made_still_gives_an_id(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    monkeypatch.setenv("DESKTOP_MEMORY_CONFIG_DIR", str(blocker / "config"))  # its parent is a file
    first = machine_id()
    assert uuid.UUID(first) and machine_id() == first  # derived from the host name: stable, nothing written
    assert blocker.read_text() == "in the way"
