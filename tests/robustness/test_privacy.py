"""Issue 5 §8: no network traffic except to the configured Ollama URL; nothing outside the chosen files is read;
opening a result never passes a path through a shell. Checked with Python audit hooks (in this process and, via
sitecustomize, in the CLI and its PDF worker), an AST audit of the code, and the GUI's real open call."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed import make_embedder
from desktop_memory.service import MemoryService

from .conftest import (
    AUDIT,
    MDDOCS,
    PDFS,
    REPO,
    Probe,
    cli_cmd,
    cli_env,
    finish,
    run_cli,
    spawn_cli,
    wait_for,
    write_settings,
)

PACKAGE = REPO / "desktop_memory"


def _library(base: Path) -> tuple[Path, list[Path]]:
    """A chosen folder, with things inside it that must not be read, and private files next to it."""
    lib = base / "chosen"
    lib.mkdir(parents=True)
    for name in ("query-params.md", "body.md"):
        shutil.copyfile(MDDOCS / "fastapi" / "tutorial" / name, lib / name)
    shutil.copyfile(PDFS / "crazyones.pdf", lib / "crazyones.pdf")
    private = base / "private"
    private.mkdir()
    (private / "diary.md").write_text("# diary\n\nsecret diary words\n", encoding="utf-8")
    (private / "keys").mkdir()
    (private / "keys" / "id_rsa").write_text("-----BEGIN KEY-----\n", encoding="utf-8")
    (lib / ".hidden.md").write_text("# hidden\n", encoding="utf-8")
    (lib / ".git").mkdir()
    (lib / ".git" / "config").write_text("[remote]\n", encoding="utf-8")
    (lib / "node_modules" / "pkg").mkdir(parents=True)
    (lib / "node_modules" / "pkg" / "README.md").write_text("# dep\n", encoding="utf-8")
    os.symlink(private / "diary.md", lib / "diary-link.md")  # symlinks are not followed by default
    os.symlink(private / "keys", lib / "keys-link")
    never = [private / "diary.md", private / "keys", private / "keys" / "id_rsa", lib / ".hidden.md",
             lib / ".git", lib / ".git" / "config", lib / "node_modules", lib / "node_modules" / "pkg" / "README.md",
             lib / "diary-link.md", lib / "keys-link"]
    return lib, never


def _touched(events, *kinds) -> set[str]:
    return {os.path.realpath(str(arg)) if isinstance(arg, str) else str(arg)
            for event, arg in events if event in kinds and isinstance(arg, (str, bytes))}


def test_local_model_run_makes_no_connection_and_reads_only_the_chosen_files(tmp_path, ledger, eval_present):
    lib, never = _library(tmp_path)
    ledger.tried(str(p) for p in lib.rglob("*"))
    settings = Settings()
    svc = MemoryService(settings, db_path=tmp_path / "db" / "p.db", embedder=make_embedder(settings.embedder))
    try:
        with AUDIT.recording() as events:
            summary = svc.index_paths([lib])
            hits = svc.search_outcome("optional query parameters", top_k=5).results
            svc.context_outcome("declare a request body", budget=500)[0]
        assert summary.embed_error == "" and summary.chunks_embedded > 0 and hits
        sockets = [e for e in events if e[0].startswith("socket.")]
        assert sockets == [], f"network activity with the local model: {sockets[:5]}"
        assert not [e for e in events if e[0] in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn")]
        touched = _touched(events, "open", "os.scandir", "os.listdir")
        base = os.path.realpath(tmp_path)
        inside_base = {p for p in touched if p.startswith(base + os.sep) or p == base}
        allowed_prefixes = (os.path.realpath(lib) + os.sep, os.path.realpath(tmp_path / "db") + os.sep)
        stray = {p for p in inside_base if not p.startswith(allowed_prefixes) and p != os.path.realpath(lib)}
        assert stray == set(), f"read outside the chosen folder: {sorted(stray)}"
        for path in never:
            assert str(path) not in touched and os.path.realpath(path) not in touched, f"read {path}"
    finally:
        svc.close()


def test_ollama_traffic_goes_only_to_the_configured_url(tmp_path, ollama, monkeypatch, ledger, eval_present):
    """Even with a proxy configured system-wide: the user's text goes to the Ollama URL and nowhere else."""
    lib, _ = _library(tmp_path)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(var, "http://10.255.255.1:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    ledger.fault("system-wide proxy variables set")
    settings = Settings(embedder=EmbedderSettings(kind="ollama", ollama_url=ollama.url,
                                                  ollama_model="nomic-embed-text"))
    svc = MemoryService(settings, db_path=tmp_path / "o.db")
    try:
        with AUDIT.recording() as events:
            summary = svc.index_paths([lib])
            svc.search_outcome("optional query parameters", top_k=5)
        assert summary.embed_error == "" and summary.chunks_embedded > 0
        connects = {tuple(arg)[:2] for event, arg in events if event == "socket.connect" and isinstance(arg, tuple)}
        assert connects == {("127.0.0.1", ollama.port)}, connects
        lookups = {arg for event, arg in events if event == "socket.getaddrinfo"}
        assert lookups <= {"127.0.0.1"}, lookups
    finally:
        svc.close()
        svc.embedder.close()


SITECUSTOMIZE = '''
import json, os, sys
_FD = os.open(os.environ["DM_AUDIT_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # before the hook
_KINDS = {"open", "os.scandir", "os.listdir", "socket.connect", "socket.getaddrinfo", "socket.sendto",
          "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn"}
def _hook(event, args):
    if event not in _KINDS:
        return
    try:
        arg = args[1] if event in ("socket.connect", "socket.sendto") else args[0]
        if isinstance(arg, bytes):
            arg = os.fsdecode(arg)
        elif isinstance(arg, os.PathLike):
            arg = os.fspath(arg)
        if not isinstance(arg, (str, int)):
            arg = repr(arg)
        os.write(_FD, (json.dumps([os.getpid(), event, arg]) + "\\n").encode("utf-8", "surrogateescape"))
    except Exception:
        pass
sys.addaudithook(_hook)
'''


# -- every front end, one harness ------------------------------------------------------------------------------
# Each front end runs as its own process (and its PDF worker) with the audit hook above, optionally under strace,
# on the same library; the same three promises are checked for all of them. A front end is one FrontEnd(...) line
# in FRONT_ENDS: a name and a driver that runs it on ``run.lib`` (see _drive_cli / _drive_window).

SECRET_WORDS = ("ultramarinequokka", "periwinklezeppelin")  # in the library's notes and nowhere else


@dataclass
class Run:
    """What a driver gets: the library, where the front end keeps its files, and how to start a process."""

    base: Path
    lib: Path
    db: Path
    config: Path
    data: Path
    env: dict[str, str]
    prefix: list[str] | None  # strace, when this machine has it

    def cli(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        out = run_cli(self.db, *args, config=self.config, timeout=timeout, prefix=self.prefix, **self.env)
        assert out.returncode == 0, out.stderr
        return out

    def python(self, code: str, timeout: float = 300) -> subprocess.CompletedProcess:
        env = cli_env(self.config, **self.env)
        out = subprocess.run([*(self.prefix or []), sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=REPO, env=env, timeout=timeout, check=False)
        assert out.returncode == 0, out.stdout + out.stderr
        return out


def _drive_cli(run: Run) -> None:
    index = json.loads(run.cli("index", str(run.lib), "--json").stdout)
    assert index["chunks_embedded"] > 0 and index["failed"] == 0, index
    assert json.loads(run.cli("search", "optional query parameters", "--json").stdout)
    run.cli("context", SECRET_WORDS[0], "--budget", "300")
    run.cli("remove", str(run.lib / "secret.md"))
    run.cli("compact")


WINDOW_DRIVER = """
import dataclasses, sys, time
from pathlib import Path
from desktop_memory.config import settings_path
from desktop_memory.settings_file import load_settings
from desktop_memory.gui.app import _setup_logging, create_app
from desktop_memory.gui.event_pump import pump_events
from desktop_memory.gui.main_window import MainWindow

def wait(cond, limit):
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            sys.exit(f"timed out: {cond}")
        pump_events(20)

_setup_logging()  # the window's own log file, as in the app
app = create_app()
settings = dataclasses.replace(load_settings(), db_path=sys.argv[1])
window = MainWindow(settings, settings_path=settings_path())
finished, searched = [], []
window.job_finished.connect(finished.append)
window.search_finished.connect(searched.append)
window.show()
wait(lambda: window.svc is not None and window.embedder_state != "loading", 120)
window.add_paths([sys.argv[2]])
wait(lambda: finished and not window.is_indexing(), 300)
assert finished[-1].chunks_embedded > 0, finished[-1]
window.search_bar.box.setText("optional query parameters")
window.search_bar.request_now()
wait(lambda: searched, 60)
assert window.results_model.rowCount() > 0
window.close()
wait(lambda: window.svc is None, 30)
print("window ok")
"""


def _drive_window(run: Run) -> None:
    code = WINDOW_DRIVER.replace("sys.argv[1]", repr(str(run.db))).replace("sys.argv[2]", repr(str(run.lib)))
    assert "window ok" in run.python(code).stdout
    log = run.data / "logs" / "gui.log"
    assert log.is_file(), "the window keeps a log: it is checked for document text"
    if os.name == "posix":  # owner-only, whatever the umask this test runs under (issue 16)
        assert (log.stat().st_mode & 0o777, log.parent.stat().st_mode & 0o777) == (0o600, 0o700)


def _drive_mcp(run: Run) -> None:
    """The MCP server over stdio, as a chat app drives it: initialize, then search and get_context."""
    run.cli("index", str(run.lib))
    proc = subprocess.Popen([*(run.prefix or []), *cli_cmd(run.db, "mcp")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env=cli_env(run.config, **run.env))
    assert proc.stdin is not None and proc.stdout is not None

    def call(msg_id: int, method: str, params: dict) -> dict:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, f"the MCP server closed its output: {proc.stderr.read() if proc.stderr else ''}"
            reply = json.loads(line)
            if reply.get("id") == msg_id:
                assert "error" not in reply, reply
                return reply["result"]

    try:
        call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "privacy-test", "version": "1"}})
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.flush()
        found = call(2, "tools/call", {"name": "search", "arguments": {"query": "optional query parameters"}})
        assert not found.get("isError"), found
        context = call(3, "tools/call", {"name": "get_context", "arguments": {"query": SECRET_WORDS[0]}})
        assert not context.get("isError"), context
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _drive_watch(run: Run) -> None:
    """`desktop-memory watch` on the library: it indexes it, then follows a new note and a deleted one."""
    logs = run.base / "watch-logs"
    proc = spawn_cli(run.db, "watch", str(run.lib), config=run.config, logs=logs, **run.env)
    probe = Probe(run.db)
    try:
        wait_for(lambda: "watching 1 folder" in (logs / "stdout").read_text(), 300, interval=0.2,
                 what="the watched folder indexed and watched")
        (run.lib / "new-note.md").write_text("# New\n\nA note written while watching.\n", encoding="utf-8")
        (run.lib / "secret.md").unlink()

        def synced() -> bool:
            conn = probe._open()
            paths = {r[0] for r in conn.execute("select path from documents")} if conn else set()
            return str(run.lib / "new-note.md") in paths and str(run.lib / "secret.md") not in paths

        wait_for(synced, 120, interval=0.2, what="the change and the deletion picked up")
        # watching embeds after a batch of changes (the local model runs in the watching process too)
        try:
            wait_for(lambda: probe.counts()["embedded"] > 0, 300, what="the watched changes embedded")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{(logs / 'stdout').read_text()}\n{(logs / 'stderr').read_text()}") from exc
    finally:
        probe.close()
        proc.terminate()
        rc, _out, err = finish(proc, 60)
    assert rc == 0, err


@dataclass
class FrontEnd:
    name: str
    drive: Callable[[Run], None]
    # ignored folders this front end may *list* (names only, never a file in them opened): watching (the window and
    # `watch`) sets a recursive inotify watch through watchdog, which lists every sub-folder, .git and node_modules
    # included
    may_list: tuple[str, ...] = ()


FRONT_ENDS = [
    FrontEnd("cli", _drive_cli),
    FrontEnd("window", _drive_window, may_list=(".git", "node_modules")),  # the window watches its folders too
    FrontEnd("mcp", _drive_mcp),
    FrontEnd("watch", _drive_watch, may_list=(".git", "node_modules")),
]


@pytest.mark.parametrize("front", FRONT_ENDS, ids=lambda f: f.name)
def test_front_end_keeps_the_memory_private(front, tmp_path, ledger, eval_present):
    """The real front end with the real local model, audited (sitecustomize) in its process and its PDF worker:
    no network, nothing read outside the chosen folder (and the app's own folders), no document text in logs."""
    lib, never = _library(tmp_path)
    (lib / "secret.md").write_text(f"# Secret\n\n{' '.join(SECRET_WORDS)} appear only in this note.\n",
                                   encoding="utf-8")
    ledger.tried(str(p) for p in lib.rglob("*"))
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    log = tmp_path / "audit.jsonl"
    config = write_settings(tmp_path / "config", embedder={"kind": "local"})
    data = tmp_path / "data"
    home = tmp_path / "home"  # an empty home: what the front end (or a library it loads) writes there is seen
    home.mkdir()
    env = {"DM_AUDIT_LOG": str(log), "PYTHONPATH": f"{hooks}{os.pathsep}{REPO}", "DESKTOP_MEMORY_DATA_DIR": str(data),
           "QT_QPA_PLATFORM": "offscreen", "HOME": str(home)}
    # strace sees what Python's hooks cannot: sockets opened by C/C++ code (onnxruntime, PDFium, SQLite, Qt)
    syscalls = tmp_path / "strace.log"
    strace = ["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=connect,sendto,sendmsg", "-o", str(syscalls)]
    use_strace = shutil.which("strace") is not None and \
        run_cli(tmp_path / "probe.db", "--version", config=config, prefix=strace).returncode == 0
    run = Run(tmp_path, lib, tmp_path / "db" / "p.db", config, data, env, strace if use_strace else None)

    front.drive(run)

    if use_strace:
        traced = syscalls.read_text(encoding="utf-8", errors="replace")
        inet = [line for line in traced.splitlines() if "AF_INET" in line or "AF_PACKET" in line]
        assert inet == [], f"{front.name}: network system calls: {inet[:5]}"
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len({pid for pid, _, _ in events}) >= 2, "the front end and its PDF worker are both audited"
    net = [(pid, e, a) for pid, e, a in events if e.startswith("socket.")]
    assert net == [], f"{front.name}: network activity: {net[:5]}"
    spawned = [a for pid, e, a in events if e in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.system")]
    assert all(os.path.basename(str(a)).startswith("python") for a in spawned), spawned  # only the PDF worker
    touched = {os.path.realpath(a) for pid, e, a in events
               if e in ("open", "os.scandir", "os.listdir") and isinstance(a, str) and a}
    base = os.path.realpath(tmp_path)
    allowed = [os.path.realpath(p) for p in (lib, run.db.parent, config, data, hooks, log)]
    stray = {p for p in touched if (p == base or p.startswith(base + os.sep))
             and not any(p == a or p.startswith(a + os.sep) for a in allowed)}
    assert stray == set(), f"{front.name}: read outside the chosen folder: {sorted(stray)}"
    listed_only = {os.path.realpath(p) for p in never if p.name in front.may_list} - {
        os.path.realpath(a) for _, e, a in events if e == "open" and isinstance(a, str) and a}
    read_never = [str(p) for p in never if (os.path.realpath(p) in touched or str(p) in touched)
                  and os.path.realpath(p) not in listed_only]
    how = {(e, os.path.realpath(a)) for _, e, a in events if isinstance(a, str) and a and os.path.realpath(a) in
           {os.path.realpath(p) for p in read_never}}
    assert read_never == [], f"{front.name}: read {read_never} ({sorted(how)})"
    python = tuple(os.path.realpath(p) + os.sep for p in (sys.base_prefix, sys.prefix))
    real_home = os.path.realpath(os.path.expanduser("~")) + os.sep
    home_reads = {p for p in touched if p.startswith(real_home) and not p.startswith(python)}
    assert home_reads == set(), f"{front.name}: read from the home folder: {sorted(home_reads)[:10]}"
    assert not (home / ".cache" / "Microsoft").exists(), f"{front.name}: onnxruntime telemetry store in the home"
    logs = [p for p in tmp_path.rglob("*") if p.is_file() and (p.suffix == ".log" or ".log." in p.name
                                                                or p.parent.name == "logs") and p != syscalls]
    for path in logs:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not any(w in text for w in SECRET_WORDS), f"{front.name}: document text in the log {path}"


def test_onnxruntime_telemetry_is_off_for_every_entry_point(tmp_path):
    """onnxruntime's wheels carry Microsoft 1DS telemetry (an event store and device id in the home folder, uploads
    to mobile.events.data.microsoft.com). Importing desktop_memory turns it off for the process and its children;
    the control run (the variable forced back to 0 before onnxruntime loads) shows what it would do."""
    code = ("import os, sys; import desktop_memory; {control}"
            "from desktop_memory.embed.local_onnx import LocalOnnxEmbedder as E; e = E(); e.load(); "
            "e.embed_documents(['a sentence']); print(os.environ.get('ORT_DISABLE_TELEMETRY'))")
    for name, control in (("app", ""), ("control", "os.environ['ORT_DISABLE_TELEMETRY'] = '0'; ")):
        home = tmp_path / name
        home.mkdir()
        # as on a person's machine: onnxruntime keeps no telemetry store when it sees a CI variable
        env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "CI")}
        env.update(HOME=str(home), PYTHONPATH=str(REPO))
        out = subprocess.run([sys.executable, "-c", code.format(control=control)], capture_output=True, text=True,
                             cwd=REPO, env=env, timeout=120, check=False)
        assert out.returncode == 0, out.stderr
        store = home / ".cache" / "Microsoft" / "DeveloperTools" / ".onnxruntime"
        if name == "app":
            assert out.stdout.strip() == "1" and not store.exists()
        else:
            assert store.is_dir(), "control: this onnxruntime keeps no telemetry store (test no longer needed?)"


# -- no shell, anywhere -----------------------------------------------------------------------------------------

FORBIDDEN_MODULES = {"subprocess", "pty", "commands", "webbrowser", "popen2"}
FORBIDDEN_OS = {"system", "popen", "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe",
                "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
                "posix_spawn", "posix_spawnp", "startfile"}


def _sources() -> list[tuple[Path, ast.AST]]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 40
    return [(f, ast.parse(f.read_text(encoding="utf-8"), filename=str(f))) for f in files]


def test_no_shell_and_no_process_spawning_in_the_code():
    problems = []
    process_starts = []
    for path, tree in _sources():
        rel = path.relative_to(REPO)
        mp_names = {"multiprocessing"} | {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
                                          for a in n.names if a.name.startswith("multiprocessing")}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bad = {a.name.split(".")[0] for a in node.names} & FORBIDDEN_MODULES
                if bad:  # the benchmark (desktop_memory_bench, outside the app) is the only one running probes
                    problems.append(f"{rel}:{node.lineno} imports {bad}")
            elif isinstance(node, ast.ImportFrom):
                if (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                    problems.append(f"{rel}:{node.lineno} imports from {node.module}")
                if node.module == "os" and {a.name for a in node.names} & FORBIDDEN_OS:
                    problems.append(f"{rel}:{node.lineno} imports a process function from os")
            elif isinstance(node, ast.Call):
                func = node.func
                for kw in node.keywords:
                    if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                        problems.append(f"{rel}:{node.lineno} passes shell=")
                if isinstance(func, ast.Attribute):
                    owner = func.value.id if isinstance(func.value, ast.Name) else None
                    if owner == "subprocess":
                        problems.append(f"{rel}:{node.lineno} calls subprocess.{func.attr}")
                    if owner == "os" and func.attr in FORBIDDEN_OS:
                        problems.append(f"{rel}:{node.lineno} calls os.{func.attr}")
                    if func.attr in ("startDetached", "start", "execute") and owner == "QProcess":
                        process_starts.append((rel, node))
                        if len(node.args) < 2 or not isinstance(node.args[1], (ast.List, ast.ListComp)):
                            problems.append(f"{rel}:{node.lineno} QProcess.{func.attr} without an argument list")
                    if func.attr == "Process" and owner != "psutil":  # psutil.Process() only inspects
                        process_starts.append((rel, node))
                    if func.attr == "get_context" and owner not in mp_names and owner is not None:
                        pass  # another module's get_context (the MCP server's tools.get_context), not a process
                    elif func.attr == "get_context" and not (node.args and isinstance(node.args[0], ast.Constant)
                                                             and node.args[0].value == "spawn"):
                        problems.append(f"{rel}:{node.lineno} multiprocessing context other than spawn")
    assert problems == []
    where = sorted({str(rel) for rel, _ in process_starts})
    assert where == ["desktop_memory/gui/desktop.py", "desktop_memory/ingest/pdf.py"], where


def test_results_open_through_qdesktopservices_only():
    trees = dict(_sources())
    desktop = trees[PACKAGE / "gui" / "desktop.py"]
    open_path = next(n for n in ast.walk(desktop) if isinstance(n, ast.FunctionDef) and n.name == "open_path")
    calls = {ast.unparse(n.func) for n in ast.walk(open_path) if isinstance(n, ast.Call)}
    assert calls == {"QDesktopServices.openUrl", "QUrl.fromLocalFile"}, calls
    for path, tree in trees.items():
        if path.name == "desktop.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                text = ast.unparse(node.func)
                assert text not in ("QDesktopServices.openUrl", "QProcess.startDetached", "os.startfile"), \
                    f"{path.relative_to(REPO)}:{node.lineno} opens something itself: use gui.desktop"
                if text == "QUrl" and node.args and not isinstance(node.args[0], ast.Constant):
                    pytest.fail(f"{path.relative_to(REPO)}:{node.lineno} QUrl(<string>) parses '#' and '?' in "
                                "file names; use QUrl.fromLocalFile")


HOSTILE_NAMES = ["a b; rm -rf ~ $(touch x) `id` & | > 'q' \"d\".md", "#not-a-fragment?not=query%20.pdf",
                 "-rf --help.txt", "日本語 😀 ملاحظات.md", "line\nbreak.md"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_open_and_reveal_hand_the_exact_path_to_the_desktop(tmp_path, name, ledger):
    from PySide6.QtCore import QObject, Slot
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QApplication

    from desktop_memory.gui import desktop

    app = QApplication.instance() or QApplication([])  # noqa: F841

    class Catcher(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.urls = []

        @Slot("QUrl")
        def handle(self, url) -> None:
            self.urls.append(url)

    target = tmp_path / name
    target.write_text("x", encoding="utf-8")
    ledger.fault("file name made of shell syntax opened from a result")
    catcher = Catcher()
    QDesktopServices.setUrlHandler("file", catcher, "handle")
    try:
        assert desktop.open_path(str(target))
        if sys.platform.startswith("linux"):
            assert desktop.reveal_path(str(target))
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert catcher.urls[0].isLocalFile() and catcher.urls[0].toLocalFile() == str(target)
    if sys.platform.startswith("linux"):
        assert catcher.urls[1].toLocalFile() == str(tmp_path)
    assert not (Path.cwd() / "x").exists() and sorted(p.name for p in tmp_path.iterdir()) == [name]
