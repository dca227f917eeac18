"""Issue 5 §4: whatever is on a disk, through the full index_paths: odd files, files that change, vanish or lose
their permissions while being indexed, and a folder mutated by another thread during a big run."""

from __future__ import annotations

import os
import random
import shutil
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from desktop_memory.chunking import chunk_document
from desktop_memory.chunking.dedupe import dedupe_within
from desktop_memory.config import IngestSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.ingest import pipeline
from desktop_memory.ingest.encoding import guess_note
from desktop_memory.ingest.hashing import hash_file
from desktop_memory.ingest.readers import read_document
from desktop_memory.service import MemoryService

from .conftest import AUDIT, IS_ROOT, MDDOCS, audit_db, copy_tree, run_cli, write_settings

MB = 1024 * 1024


def service(db: Path, **ingest) -> MemoryService:
    settings = Settings(ingest=IngestSettings(**ingest))
    return MemoryService(settings, db_path=db, embedder=HashEmbedder(64))


def outcomes(summary) -> dict[str, tuple[str, str]]:
    return {o.path: (o.status, o.reason) for o in summary.outcomes}


def doc_row(svc: MemoryService, path: Path | str):
    with svc.reading() as store:
        return store.get_document(str(path))


def stored_texts(svc: MemoryService, path: Path) -> list[str]:
    with svc.reading() as store:
        return [r[0] for r in store.conn.execute(
            "select c.text from chunks c join documents d on d.id = c.doc_id where d.path = ? order by c.ord",
            (str(path),))]


@pytest.fixture()
def odd_folder(tmp_path):
    lib = tmp_path / "odd"
    lib.mkdir()
    (lib / "empty.md").write_bytes(b"")
    (lib / "blank.txt").write_text(" \n\t\n  \n", encoding="utf-8")
    os.mkfifo(lib / "fifo.md")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(lib / "socket.txt"))
    if IS_ROOT:
        os.mknod(lib / "device.txt", stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    os.symlink("loop-b.md", lib / "loop-a.md")
    os.symlink("loop-a.md", lib / "loop-b.md")
    (lib / "sub").mkdir()
    os.symlink("..", lib / "sub" / "up")  # a folder loop
    os.symlink("/dev/zero", lib / "zero.txt")  # endless if ever read
    with open(lib / "huge-single-line.log", "wb") as fh:  # 200 MB, one line
        block = b"0123456789abcdef" * 65536
        for _ in range(200):
            fh.write(block)
    (lib / "long-line.log").write_bytes(b"GET /" + random.Random(1).randbytes(3 * MB // 2).hex().encode() + b"\n")
    (lib / "latin1.txt").write_bytes("Crème brûlée et café au lait, très naïve.\n".encode("cp1252") * 20)
    (lib / "garbage.txt").write_bytes(random.Random(5).randbytes(4096))
    (lib / ".hidden-secret.md").write_text("# secret\n", encoding="utf-8")
    names = {
        "日本語のメモ.md": "東京 会議 メモ nihongo",
        "emoji 😀 notes.md": "party planning emoji",
        "ملاحظات عربية.md": "arabic notes marhaba",
        "Zoe\u0308 decomposed.md": "decomposed unicode zoeword",
        "space 'single' \"double\" ; $(rm -rf ~) `x` & | > .md": "shellchars harmless",
    }
    for name, body in names.items():
        (lib / name).write_text(f"# {name}\n\n{body}\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(lib), b"caf\xe9-latin1-name.md"), "wb") as fh:
        fh.write(b"# name is not utf-8\n")
    deep = lib
    for i in range(12):
        deep = deep / (f"{i:02d}-" + "d" * 100)
    deep.mkdir(parents=True)
    longest = deep / ("f" * 200 + ".md")
    longest.write_text("# deep\n\nlongpathword lives very deep.\n", encoding="utf-8")
    yield lib, names, longest
    sock.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("follow", [False, True], ids=["symlinks-not-followed", "symlinks-followed"])
def test_odd_files_in_one_folder(tmp_path, odd_folder, follow, ledger):
    lib, names, longest = odd_folder
    ledger.tried_folder(lib)
    ledger.fault("odd files: FIFO/socket/device/symlink loops/0-byte/200 MB line/invalid UTF-8/odd names", 12)
    svc = service(tmp_path / "odd.db", follow_symlinks=follow)
    try:
        with AUDIT.recording() as events:
            started = time.monotonic()
            summary = svc.index_paths([lib])
            elapsed = time.monotonic() - started
        got = outcomes(summary)
        big = str(lib / "huge-single-line.log")
        assert not [e for e in events if e[0] == "open" and e[1] == big], "a 200 MB file over the cap is never read"
        assert elapsed < 120, f"{elapsed:.0f} s"
        expect = {
            "empty.md": ("skipped", "empty file"),
            "blank.txt": ("skipped", "file contains only whitespace"),
            "fifo.md": ("skipped", "not a regular file (FIFO)"),
            "socket.txt": ("skipped", "not a regular file (socket)"),
            "huge-single-line.log": ("skipped", "too large: 200.0 MB (limit 50 MB)"),
            ".hidden-secret.md": ("skipped", "hidden file"),
            "caf\\xe9-latin1-name.md": ("skipped", "file name is not valid text (undecodable bytes)"),
            "long-line.log": ("indexed", ""),
            "latin1.txt": ("indexed", ""),
        }
        if IS_ROOT:
            expect["device.txt"] = ("skipped", "not a regular file (character device)")
        expect["loop-a.md"] = ("skipped", "symlink loop")  # the link cannot even be resolved
        expect["loop-b.md"] = ("skipped", "symlink loop")
        if follow:
            expect["zero.txt"] = ("skipped", "not a regular file (character device)")
            expect["sub/up"] = ("skipped", "symlink loop")
        else:
            for name in ("zero.txt", "sub/up"):
                expect[name] = ("skipped", "symlink (not followed)")
        for name, (status, reason) in expect.items():
            path = str(lib / name)
            assert got.get(path, (None, None))[0] == status, (name, got.get(path))
            assert got[path][1] == reason or (status == "indexed" and got[path][1].endswith("collapsed")), name
        for name in names:
            assert got[str(lib / name)][0] == "indexed", name
        assert got[str(lib / "garbage.txt")][0] == "skipped" and got[str(lib / "garbage.txt")][1].startswith("binary")
        assert got[str(longest)][0] == "indexed" and len(str(longest)) > 1400

        # recorded in the database with the same words (folders are reported, not stored)
        for name, (status, reason) in expect.items():
            if name == "sub/up":
                continue
            row = doc_row(svc, lib / name)
            if name == "latin1.txt":  # a guessed encoding is recorded with the document (issue 11)
                reason = guess_note("cp1252") or ""
            assert row is not None and (row.status, row.error) == (status, reason), (name, row)
        # caps: a 3 MB single line is cut into pieces no longer than max_chars
        long_chunks = stored_texts(svc, lib / "long-line.log")
        assert len(long_chunks) > 2000 and max(map(len, long_chunks)) <= svc.settings.chunking.max_chars
        # searchable by content, whatever the file name
        for query, name in [("東京 会議", "日本語のメモ.md"), ("marhaba", "ملاحظات عربية.md"),
                            ("zoeword", "Zoe\u0308 decomposed.md"), ("shellchars", list(names)[4]),
                            ("brûlée café", "latin1.txt"), ("longpathword", str(longest))]:
            hits = svc.search_outcome(query, backend="keyword", top_k=3).results
            assert hits and hits[0].source == str(lib / name), (query, hits[:1])
        audit_db(tmp_path / "odd.db", ledger)

        again = svc.index_paths([lib])  # nothing is read twice; every outcome is remembered
        assert again.indexed == 0 and again.failed == 0 and again.chunks_embedded == 0
    finally:
        svc.close()


@pytest.mark.timeout(120)
def test_files_changing_under_the_reader(tmp_path, monkeypatch, ledger):
    """Between the walk (and the hash) and the read, files are deleted, rewritten, swapped for a FIFO or a
    folder, grow past the cap or are emptied: each gets a clear outcome, the index stays consistent, and a
    rewritten file ends up indexed with the hash of what was indexed."""
    lib = tmp_path / "lib"
    lib.mkdir()
    files = {
        "deleted-new.md": "# doomed\n\nnever indexed\n",
        "deleted-old.md": "# was here\n\noldvanishword\n",
        "rewritten.md": "# before\n\noldcontentword " * 20,
        "fifo-swap.md": "# to be swapped\n\nfifo\n",
        "dir-swap.md": "# to become a folder\n\ndir\n",
        "grows.log": "small log line\n",
        "emptied.md": "# kept\n\nemptiedword stays searchable\n",
        "steady.md": "# steady\n\nsteadyword\n",
    }
    for name, body in files.items():
        (lib / name).write_text(body, encoding="utf-8")
    ledger.tried_folder(lib)
    svc = service(tmp_path / "m.db", max_file_mb=1.0)
    try:
        first = svc.index_paths([lib / "deleted-old.md", lib / "emptied.md"])
        assert first.indexed == 2
        for name in ("deleted-old.md", "emptied.md"):  # changed since: will be re-read
            with open(lib / name, "a", encoding="utf-8") as fh:
                fh.write("\nmore\n")

        real_read = pipeline.read_document
        done: set[str] = set()

        def hook(path, settings):
            name = os.path.basename(path)
            if name not in done:
                done.add(name)
                p = Path(path)
                if name.startswith("deleted"):
                    p.unlink()
                elif name == "rewritten.md":
                    p.write_text("# after\n\nnewcontentword and a different length\n", encoding="utf-8")
                elif name == "fifo-swap.md":
                    p.unlink()
                    os.mkfifo(p)
                elif name == "dir-swap.md":
                    p.unlink()
                    p.mkdir()
                elif name == "grows.log":
                    with open(p, "ab") as fh:
                        fh.write(b"x" * (2 * MB))
                elif name == "emptied.md":
                    p.write_bytes(b"")
            return real_read(path, settings)

        monkeypatch.setattr(pipeline, "read_document", hook)
        ledger.fault("file deleted/rewritten/swapped/grown/emptied just before it is read", 7)
        summary = svc.index_paths([lib])
        got = {os.path.basename(p): v for p, v in outcomes(summary).items()}
        assert got["deleted-new.md"] == ("failed", "file disappeared while indexing")
        assert got["deleted-old.md"] == ("failed", "file disappeared while indexing")
        assert got["rewritten.md"][0] == "indexed"
        assert got["fifo-swap.md"] == ("skipped", "not a regular file (FIFO)")
        assert got["dir-swap.md"] == ("skipped", "is a folder, not a file")
        assert got["grows.log"] == ("skipped", "too large: 2.0 MB (limit 1 MB)")
        assert got["emptied.md"] == ("skipped", "empty file")
        assert got["steady.md"][0] == "indexed"

        # a file deleted while being re-indexed leaves the index (its text is gone from the disk)
        assert doc_row(svc, lib / "deleted-old.md") is None
        assert not svc.search_outcome("oldvanishword", backend="keyword").results
        # the rewritten file: new text indexed, and the stored hash is the hash of that text
        row = doc_row(svc, lib / "rewritten.md")
        assert row.content_hash == hash_file(lib / "rewritten.md")
        assert svc.search_outcome("newcontentword", backend="keyword").results[0].source == str(lib / "rewritten.md")
        assert not svc.search_outcome("oldcontentword", backend="keyword").results
        # a file emptied during a re-index keeps its previous, searchable version (documented behaviour)
        assert svc.search_outcome("emptiedword", backend="keyword").results[0].source == str(lib / "emptied.md")
        audit_db(tmp_path / "m.db", ledger)

        monkeypatch.setattr(pipeline, "read_document", real_read)
        (lib / "dir-swap.md").rmdir()
        (lib / "fifo-swap.md").unlink()
        again = {os.path.basename(p): v for p, v in outcomes(svc.index_paths([lib])).items()}
        assert again["rewritten.md"] == ("unchanged", ""), "the hash stored matches the file: nothing to redo"
        assert again["steady.md"] == ("unchanged", "")
        assert again["deleted-new.md"] == ("removed", "file no longer exists")  # its 'failed' record goes too
        assert doc_row(svc, lib / "deleted-new.md") is None
        audit_db(tmp_path / "m.db", ledger)
    finally:
        svc.close()


@pytest.mark.timeout(240)
@pytest.mark.skipif(not IS_ROOT or shutil.which("setpriv") is None, reason="needs root and setpriv to drop "
                    "CAP_DAC_OVERRIDE (root reads through permission bits)")
def test_permission_denied_through_the_cli(tmp_path, ledger):
    """The real CLI, as root WITHOUT the capabilities that bypass permission bits (so they apply as to a user):
    an unreadable file, an unreadable folder, and a file that loses its permissions just before it is read."""
    lib = tmp_path / "lib"
    (lib / "closed").mkdir(parents=True)
    (lib / "ok.md").write_text("# ok\n\nreadableword\n", encoding="utf-8")
    (lib / "secret.md").write_text("# secret\n\nsecretword\n", encoding="utf-8")
    (lib / "race.md").write_text("# race\n\nraceword\n", encoding="utf-8")
    (lib / "closed" / "inside.md").write_text("# inside\n", encoding="utf-8")
    os.chmod(lib / "secret.md", 0)
    os.chmod(lib / "closed", 0)
    ledger.tried_folder(lib)
    ledger.fault("permission denied (file, folder, revoked just before the read)", 3)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import os\n"
        "import desktop_memory.ingest.pipeline as p\n"
        "_real = p.read_document\n"
        "def _read(path, settings):\n"
        "    if path.endswith('race.md'):\n"
        "        os.chmod(path, 0)\n"
        "    return _real(path, settings)\n"
        "p.read_document = _read\n", encoding="utf-8")
    config = write_settings(tmp_path / "cfg", embedder={"kind": "hash"})
    db = tmp_path / "p.db"
    drop = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
            "--bounding-set=-dac_override,-dac_read_search"]
    try:
        proc = run_cli(db, "index", lib, "--json", config=config, prefix=drop,
                       PYTHONPATH=f"{hooks}{os.pathsep}{Path(__file__).resolve().parents[2]}")
    finally:
        os.chmod(lib / "closed", 0o755)
        os.chmod(lib / "secret.md", 0o644)
        os.chmod(lib / "race.md", 0o644)
    assert proc.returncode == 0, proc.stderr
    import json

    got = {os.path.relpath(o["path"], lib): (o["status"], o["reason"]) for o in json.loads(proc.stdout)["outcomes"]}
    assert got == {
        "closed": ("skipped", "permission denied"),
        "ok.md": ("indexed", ""),
        "race.md": ("failed", "permission denied"),
        "secret.md": ("skipped", "permission denied"),
    }
    state = audit_db(db, ledger)
    assert state.docs[str(lib / "secret.md")][:2] == ("skipped", "permission denied")
    assert state.docs[str(lib / "race.md")][:2] == ("failed", "permission denied")
    assert state.indexed_paths() == {str(lib / "ok.md")}


class Mutator(threading.Thread):
    """Rewrites, deletes, recreates and renames files of a folder as fast as it can while it indexes.
    Every write changes the file's size (content only grows in length per file), so the end state is
    unambiguous on file systems with coarse timestamps."""

    def __init__(self, files: list[Path], seed: int = 7) -> None:
        super().__init__(daemon=True)
        self.files = files
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.actions = 0
        self.generation = {f: 0 for f in files}

    def run(self) -> None:
        while not self.stop.is_set():
            f = self.rng.choice(self.files)
            self.generation[f] += 1
            g = self.generation[f]
            action = self.rng.choice(["rewrite", "rewrite", "append", "delete", "rename"])
            try:
                if action == "rewrite":
                    f.write_text(f"# gen {g}\n\n" + f"mutantword{g} " * (g + 3), encoding="utf-8")
                elif action == "append":
                    with open(f, "a", encoding="utf-8") as fh:
                        fh.write(f"\nappended {g} " + "x" * g)
                elif action == "delete":
                    f.unlink(missing_ok=True)
                else:
                    tmp = f.with_suffix(".tmp-rename")
                    tmp.write_text(f"# renamed in {g}\n\n" + "renameword " * (g + 5), encoding="utf-8")
                    os.replace(tmp, f)  # an editor's atomic save
            except OSError:
                pass
            self.actions += 1
            time.sleep(0.001)


@pytest.mark.timeout(240)
def test_folder_mutated_while_a_big_run_indexes(tmp_path, ledger, eval_present):
    lib = tmp_path / "lib"
    files = copy_tree(MDDOCS / "hugo", lib)
    hot = files[:: max(1, len(files) // 40)]
    ledger.tried(files)
    db = tmp_path / "chaos.db"
    svc = service(db)
    mutator = Mutator(hot)
    try:
        mutator.start()
        summary = svc.index_paths([lib])  # must simply finish
        mutator.stop.set()
        mutator.join(10)
        ledger.fault("concurrent file mutations during indexing", mutator.actions)
        assert mutator.actions > 50, "the mutator barely ran"
        assert summary.indexed > len(files) // 2
        audit_db(db, ledger)

        final = svc.index_paths([lib])  # the disk is quiet now: the index must catch up exactly
        assert final.failed == 0, [o for o in final.outcomes if o.status == "failed"]
        state = audit_db(db, ledger)
        on_disk = {str(p) for p in lib.rglob("*") if p.is_file()}
        assert set(state.docs) == on_disk, "one document per file on disk, none for deleted files"
        for f in hot:
            if not f.exists():
                continue
            row = doc_row(svc, f)
            assert row.status == "indexed" and row.content_hash == hash_file(f), f
            expected, _ = dedupe_within(chunk_document(read_document(str(f), svc.settings.ingest),
                                                       svc.settings.chunking))
            assert stored_texts(svc, f) == [c.text for c in expected], f"{f}: stored text is not the file's"
        assert state.pending == set()
    finally:
        mutator.stop.set()
        svc.close()
