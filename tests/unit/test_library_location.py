"""A library's address: a path or a postgresql:// URL, everywhere --db is taken (issue 32 items 1, 4, 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.errors import SettingsError, UserError
from desktop_memory.library_location import (
    BadLocation,
    is_server_url,
    parse_location,
    redacted,
    shown,
    url_problem,
)
from desktop_memory.settings_file import load_settings, validate_settings

ROOT = Path(__file__).resolve().parents[2]


def test_a_url_is_told_from_a_path():
    assert is_server_url("postgresql://me@server/memory")
    assert is_server_url("POSTGRES://me@server/memory")
    assert not is_server_url("/home/me/memory.db")
    assert not is_server_url(Path("postgresql://me@server/memory"))  # a Path is a file, whatever its name
    assert not is_server_url("C:\\Users\\me\\memory.db")


def test_a_path_stays_a_path_and_a_url_reaches_libpq_unchanged():
    assert parse_location("~/memory.db") == Path("~/memory.db").expanduser()
    url = "postgresql://me@db.example.org:5433/memory?sslmode=verify-full&sslrootcert=/etc/ca.pem"
    assert parse_location(url) == url  # TLS settings and all, exactly as written
    assert parse_location("postgresql:///memory?host=/var/run/postgresql") == \
        "postgresql:///memory?host=/var/run/postgresql"  # a Unix socket, no host name: libpq's own form


def test_a_password_is_never_shown():
    assert redacted("postgresql://me:s3cret@server/memory") == "postgresql://me:***@server/memory"
    assert "s3cret" not in redacted("postgresql://me@server/memory?password=s3cret&sslmode=require")
    assert "sslmode=require" in redacted("postgresql://me@server/memory?password=s3cret&sslmode=require")
    assert shown("postgresql://me:s3cret@server/memory") == "postgresql://me:***@server/memory"
    assert shown(Path("/x/memory.db")) == "/x/memory.db"
    with pytest.raises(BadLocation) as err:
        parse_location("postgresql://me:s3cret@server")  # no database named
    assert "s3cret" not in str(err.value) and "names no database" in str(err.value)


@pytest.mark.parametrize(("url", "why"), [
    ("postgresql://me@server", "names no database"),
    ("postgresql://me@server:99999/db", "does not parse"),
    ("postgresql://me@server/my db", "space"),
])
def test_a_bad_url_gets_one_sentence(url, why):
    problem = url_problem(url)
    assert problem is not None and why in problem


def test_another_scheme_is_refused_not_taken_for_a_file():
    with pytest.raises(UserError, match="mysql:// is not a library address"):
        parse_location("mysql://me@server/db")


def test_the_settings_file_refuses_a_password_and_says_where_it_goes():
    with pytest.raises(SettingsError) as err:
        validate_settings({"db_url": "postgresql://me:s3cret@server/memory"})
    text = str(err.value)
    assert "s3cret" not in text
    assert "PGPASSWORD" in text and ".pgpass" in text and "api-key set" in text
    with pytest.raises(SettingsError):
        validate_settings({"db_url": "postgresql://me@server/memory?password=s3cret"})
    ok = validate_settings({"db_url": "postgresql://me@server/memory?sslmode=verify-full"})
    assert ok.resolved_db_location() == "postgresql://me@server/memory?sslmode=verify-full"


def test_where_the_library_is_decided(monkeypatch, tmp_path):
    default = Settings().resolved_db_location()
    assert isinstance(default, Path) and default == Settings().resolved_db_path()  # nobody set a URL: no change
    url = "postgresql://me@server/memory"
    assert Settings(db_path=str(tmp_path / "x.db"), db_url=url).resolved_db_location() == url
    monkeypatch.setenv("DESKTOP_MEMORY_DB", str(tmp_path / "env.db"))
    assert Settings(db_url=url).resolved_db_location() == tmp_path / "env.db"  # the environment first
    monkeypatch.setenv("DESKTOP_MEMORY_DB", "postgresql://me:pw@server/memory")  # fine here: not a file
    assert Settings().resolved_db_location() == "postgresql://me:pw@server/memory"


def test_a_broken_settings_file_is_not_rewritten(tmp_path, monkeypatch):
    cfg = Path(os.environ["DESKTOP_MEMORY_CONFIG_DIR"])
    cfg.mkdir(parents=True, exist_ok=True)
    body = 'db_url = "postgresql://me:s3cret@server/memory"\n'
    (cfg / "settings.toml").write_text(body)
    with pytest.raises(SettingsError):
        load_settings()
    assert (cfg / "settings.toml").read_text() == body


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "desktop_memory.cli", *args], capture_output=True, text=True,
                          check=False, env=full, timeout=120)


def test_the_cli_says_one_sentence_and_never_the_password(tmp_path):
    proc = _cli("--db", "postgresql://me:s3cret@127.0.0.1:1/memory", "search", "x")
    assert proc.returncode == 1
    assert "s3cret" not in proc.stderr + proc.stdout
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    proc = _cli("--db", "postgresql://me@server", "stats")
    assert proc.returncode == 1 and "names no database" in proc.stderr
    # no file named after the URL was made anywhere (a URL never reaches SQLite as a path), and the app did not
    # fall back to another library: the default one was neither opened nor made
    assert not list(Path.cwd().glob("postgresql*")) and not list(tmp_path.glob("postgresql*"))
    assert not (Path(os.environ["DESKTOP_MEMORY_DATA_DIR"]) / "memory.db").exists()


def test_the_environment_names_the_library(tmp_path):
    db = tmp_path / "env.db"
    proc = _cli("stats", env={"DESKTOP_MEMORY_DB": str(db)})
    assert proc.returncode == 1 and f"no library at {db}" in proc.stderr


def test_a_server_library_that_cannot_be_opened_is_one_sentence_everywhere(tmp_path, monkeypatch):
    """The service and the MCP server: a UserError without the password, and no file named after the URL."""
    from desktop_memory.mcp_server.library import Library
    from desktop_memory.service import MemoryService

    monkeypatch.chdir(tmp_path)
    url = "postgresql://me:s3cret@127.0.0.1:1/memory"
    with pytest.raises(UserError) as err:
        MemoryService(Settings(), db_path=url)
    assert "s3cret" not in str(err.value) and "127.0.0.1" in str(err.value)
    lib = Library(Settings(), url)
    try:
        assert lib.db_path == url
        with pytest.raises(UserError) as err:
            lib.call(lambda svc: svc.stats())
        assert "s3cret" not in str(err.value) and "No desktop-memory library" not in str(err.value)
    finally:
        lib.close()
    assert list(tmp_path.iterdir()) == []


def test_paths_names_a_server_library_without_its_password():
    from desktop_memory.cli.paths import locations

    found, _notes = locations("postgresql://me:s3cret@server/memory")
    assert found["database"]["path"] == "postgresql://me:***@server/memory"
    assert "s3cret" not in repr(found)


def test_a_server_password_comes_from_the_key_store_unless_libpq_has_one(monkeypatch):
    from desktop_memory.library_open import server_password

    url = "postgresql://me@server/memory"
    assert server_password(url) is None  # none anywhere: libpq looks in ~/.pgpass or its service file
    monkeypatch.setenv("DESKTOP_MEMORY_DATABASE_API_KEY", "from-the-key-store")
    assert server_password(url) == "from-the-key-store"
    assert server_password("postgresql://me:inline@server/memory") is None  # the URL's own wins
    monkeypatch.setenv("PGPASSWORD", "from-the-environment")
    assert server_password(url) is None  # libpq reads PGPASSWORD itself


def test_an_empty_password_is_not_shown_as_one_and_the_store_shows_urls_alike():
    from desktop_memory.store import location

    assert redacted("postgresql://postgres:@/bench?host=/tmp/x") == "postgresql://postgres@/bench?host=/tmp/x"
    url = "postgresql://me:s3cret@server/memory?password=s3cret&sslmode=require"
    assert location.redacted(url) == redacted(url) and "s3cret" not in redacted(url)


def test_a_command_line_urls_password_is_split_off_for_pgpassword():
    from desktop_memory.library_location import split_password

    assert split_password("postgresql://me:s%40cret@db.example/memory?sslmode=verify-full") == (
        "postgresql://me@db.example/memory?sslmode=verify-full", "s@cret")
    assert split_password("postgresql://me@db/memory?password=p%26w&sslmode=require") == (
        "postgresql://me@db/memory?sslmode=require", "p&w")
    assert split_password("postgresql://postgres:@/x?host=/tmp/s") == ("postgresql://postgres@/x?host=/tmp/s", None)
    assert split_password("postgresql://me@db/memory") == ("postgresql://me@db/memory", None)
