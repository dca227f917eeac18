"""Two machines indexing into one PostgreSQL library at once while a third searches (issue 32 item 9).

    python -m desktop_memory_bench.shared_writers URL [--source ../shared/eval/scifact] [--docs 1000]

Three processes, three config folders, so three machines (desktop_memory/machine.py): ``desktop`` indexes a folder
``…/notes``, ``laptop`` a folder ``…/notes2`` (its path starts with the other's: a prefix test mixing them up
would refuse it or count its files twice) holding files of the SAME names with other text, and ``office`` searches
in a loop (hybrid, both lanes) while they write. The documents are real: SciFact abstracts (a BEIR folder with
``corpus.jsonl``) or the Markdown files of a folder, copied into a temp folder. When the writers are done a fourth
machine checks the library: every file of each folder indexed under it and no other, each folder its machine's, a
document of each found by search with its machine named, and the library's own check clean. Printed: passages/s
per writer (alone in the same run for comparison unless ``--no-alone``), searches done, errors (must be 0),
documents expected and found per machine, search p50/p95 during the writes, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from desktop_memory.store.location import redacted

from .eval_data import SHARED_EVAL, missing_data
from .shared_roles import make_service
from .table import render_table

WRITERS = ("desktop", "laptop")
READER = "office"
PROJECT = Path(__file__).resolve().parents[1]
QUIET_SEARCHES = 100  # the reader's queries searched again once the writers are done


def load_docs(source: Path, count: int) -> list[str]:
    """``count`` real documents as Markdown text: SciFact abstracts ("# title" + abstract), or a folder's .md files."""
    corpus = source / "corpus.jsonl"
    texts: list[str] = []
    if corpus.is_file():
        with corpus.open(encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                texts.append(f"# {row.get('title') or row['_id']}\n\n{row['text']}\n")
                if len(texts) == count:
                    break
    elif source.is_dir():
        for path in sorted(source.rglob("*.md")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if text.strip():
                texts.append(text)
            if len(texts) == count:
                break
    if not texts:
        raise SystemExit(missing_data(source, "a BEIR folder with corpus.jsonl, or a folder of Markdown files"))
    return texts


def prepare(base: Path, texts: list[str]) -> dict[str, Path]:
    """Half the texts into each writer's folder, under the same file names (doc-00000.md …)."""
    half = len(texts) // 2
    folders = {"desktop": base / "files" / "notes", "laptop": base / "files" / "notes2"}
    for (_name, folder), part in zip(folders.items(), (texts[:half], texts[half:2 * half])):
        folder.mkdir(parents=True)
        for i, text in enumerate(part):
            (folder / f"doc-{i:05d}.md").write_text(text, encoding="utf-8")
    return folders


def title_of(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.lstrip("#").strip()[:200]


def _env(base: Path, name: str) -> dict[str, str]:
    env = dict(os.environ)
    env["DESKTOP_MEMORY_CONFIG_DIR"] = str(base / f"config-{name}")
    env["DESKTOP_MEMORY_DATA_DIR"] = str(base / f"data-{name}")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT), env.get("PYTHONPATH", "")) if p)
    return env


def _start(base: Path, args: list[str], name: str, log: Path) -> subprocess.Popen[str]:
    """One machine's process; its stderr goes to ``log`` (a pipe nobody reads until the end could fill and stall it)."""
    cmd = [sys.executable, "-m", "desktop_memory_bench.shared_roles", *args, "--name", name]
    with log.open("w", encoding="utf-8") as err:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=_env(base, name))


def _finish(proc: subprocess.Popen[str], timeout_s: float, log: Path) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=timeout_s)
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if not lines:
        err = log.read_text(encoding="utf-8", errors="replace")
        return {"fatal": f"exit {proc.returncode} without figures: {err.strip()[-800:]}"}
    found: dict[str, Any] = json.loads(lines[-1])
    return found


def _ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":  # it failed before opening the library: its figures say why
        raise RuntimeError(f"a process did not start: {line.strip()} {proc.communicate(timeout=30)}")


def run_round(url: str, base: Path, folders: dict[str, Path], queries: list[str], *, embedder: str = "hash",
              backend: str = "hybrid", reader: bool = True, timeout_s: float = 3600) -> dict[str, Any]:
    """One round: the writers of ``folders`` (and the reader) start together; their figures."""
    round_dir = Path(tempfile.mkdtemp(prefix="round-", dir=base))
    go, stop = round_dir / "go", round_dir / "stop"
    qfile = round_dir / "queries.json"
    qfile.write_text(json.dumps(queries), encoding="utf-8")
    common = ["--go", str(go), "--embedder", embedder]
    logs = {name: round_dir / f"{name}.log" for name in [*folders, READER]}
    procs = {name: _start(base, ["writer", url, "--folder", str(folder), *common], name, logs[name])
             for name, folder in folders.items()}
    if reader:
        procs[READER] = _start(base, ["reader", url, "--queries", str(qfile), "--stop", str(stop),
                                      "--backend", backend, *common], READER, logs[READER])
    try:
        for proc in procs.values():
            _ready(proc)
        load_before = os.getloadavg()
        go.touch()
        t0 = time.perf_counter()
        writers = {name: _finish(procs[name], timeout_s, logs[name]) for name in folders}
        wall = time.perf_counter() - t0
        stop.touch()
        read = _finish(procs[READER], 120, logs[READER]) if reader else None
        if read is not None and "fatal" not in read:
            lat = read["latencies_ms"]
            read["p50_ms"], read["p95_ms"] = _pct(lat, 50), _pct(lat, 95)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return {"writers": writers, "reader": read, "wall_s": wall, "load_before": load_before,
            "load_after": os.getloadavg()}


def verify(url: str, base: Path, folders: dict[str, Path], texts: dict[str, list[str]], queries: list[str],
           backend: str = "hybrid", embedder: str = "hash") -> dict[str, Any]:
    """A fourth machine's look at the library: expected vs found per machine, whose folder is whose, search; and
    the reader's queries once more with no writer (the search p50/p95 to compare the ones during the writes with)."""
    before = os.environ.get("DESKTOP_MEMORY_CONFIG_DIR")
    os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = str(base / "config-checker")  # a machine of its own
    try:
        svc = make_service(url, "checker", embedder)  # the writers' embedder: the reader's queries the same way
    finally:  # (the machine id is read when the service opens)
        if before is None:
            os.environ.pop("DESKTOP_MEMORY_CONFIG_DIR", None)
        else:
            os.environ["DESKTOP_MEMORY_CONFIG_DIR"] = before
    try:
        owners = svc.other_machines()
        rows: dict[str, Any] = {}
        for name, folder in folders.items():
            expected = {str(p) for p in folder.glob("*.md")}
            found = set(svc.indexed_under(str(folder)))
            probe = title_of(texts[name][len(texts[name]) // 2])
            hits = svc.search_outcome(probe, backend="keyword", top_k=10).results
            named = [h.machine for h in hits if h.source.startswith(str(folder) + os.sep)]
            rows[name] = {"expected": len(expected), "found": len(found & expected),
                          "missing": sorted(expected - found)[:5], "foreign": sorted(found - expected)[:5],
                          "owner": owners.get(str(folder), ""), "search_named": named[:1]}
        quiet: list[float] = []
        for query in queries[:QUIET_SEARCHES]:
            t0 = time.perf_counter()
            svc.search_outcome(query, backend=backend, top_k=10)
            quiet.append((time.perf_counter() - t0) * 1000)
        stats = svc.stats()
        return {"machines": rows, "check": svc.check(), "stats_documents": stats.documents,
                "passages": stats.chunks, "vectors": stats.vectors, "pending_vectors": stats.pending_vectors,
                "duplicates": stats.duplicates, "quiet_p50_ms": _pct(quiet, 50), "quiet_p95_ms": _pct(quiet, 95)}
    finally:
        svc.close()


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _rate(writer: dict[str, Any] | None) -> str:
    """A writer's passages per second, or "-" (not run, or failed)."""
    if not writer or "fatal" in writer or not writer["seconds"]:
        return "-"
    return f"{writer['passages'] / writer['seconds']:,.0f}"


def render(report: dict[str, Any]) -> str:
    together, alone, check = report["together"], report.get("alone", {}), report["verify"]
    rows = []
    for name in WRITERS:
        w = together["writers"][name]
        m = check["machines"][name]
        if "fatal" in w:
            rows.append([name, "-", "-", "-", "-", "-", str(m["expected"]), str(m["found"]), w["fatal"][:60]])
            continue
        rows.append([name, f"{w['passages']:,}", f"{w['seconds']:.1f}", _rate(w),
                     _rate(report.get("pair", {}).get(name)), _rate(alone.get(name)),
                     str(m["expected"]), str(m["found"]),
                     str(w["failed"] + w["skipped"] + len(m["missing"]) + len(m["foreign"])
                         + (m["owner"] != name) + (m["search_named"] != [name]))])
    table = render_table(["machine", "passages", "s", "passages/s with reader", "no reader", "alone",
                          "docs expected", "docs found", "errors"], rows)
    r = together["reader"] or {}
    reader = render_table(
        ["reader", "searches", "with results", "p50 ms", "p95 ms", "errors", "no writer: p50", "p95"],
        [[READER, str(r.get("searches", 0)), str(r.get("with_results", 0)), f"{r.get('p50_ms', float('nan')):.1f}",
          f"{r.get('p95_ms', float('nan')):.1f}", str(r.get("error_count", r.get("fatal", "?"))),
          f"{check['quiet_p50_ms']:.1f}", f"{check['quiet_p95_ms']:.1f}"]])
    lb, la = together["load_before"], together["load_after"]
    return (f"{table}\n\n{reader}\n\nwall {together['wall_s']:.1f} s for both writers; library check: "
            f"{check['check'] or 'clean'}; documents by status {check['stats_documents']}; {check['passages']:,} "
            f"passages ({check['duplicates']} duplicates), {check['vectors']:,} vectors ({check['pending_vectors']} "
            "pending)\n"
            f"load average before {lb[0]:.2f} {lb[1]:.2f} {lb[2]:.2f}, after {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")


def errors_of(report: dict[str, Any]) -> list[str]:
    """Every error and lost document of a run ([] = none): what the test and the benchmark's exit code check."""
    out: list[str] = []
    for name in WRITERS:
        w, m = report["together"]["writers"][name], report["verify"]["machines"][name]
        out += [f"{name}: {w['fatal']}"] if "fatal" in w else [f"{name}: {p}" for p in w["problems"]]
        out += [f"{name}: lost {p}" for p in m["missing"]] + [f"{name}: foreign {p}" for p in m["foreign"]]
        if m["found"] != m["expected"]:
            out.append(f"{name}: {m['found']} of {m['expected']} documents found")
        if m["owner"] != name:
            out.append(f"{name}: its folder is recorded as {m['owner']!r}'s")
        if m["search_named"] != [name]:
            out.append(f"{name}: a search for one of its documents named {m['search_named']}")
    r = report["together"]["reader"]
    if r is not None:
        out += [f"reader: {r['fatal']}"] if "fatal" in r else [f"reader: {e}" for e in r["errors"]]
    check = report["verify"]
    if check["pending_vectors"] or check["vectors"] != check["passages"] - check["duplicates"]:
        out.append(f"{check['vectors']} vectors for {check['passages']} passages ({check['duplicates']} duplicates, "
                   f"{check['pending_vectors']} pending)")
    return out + [f"check: {p}" for p in check["check"]]


def run(url: str, source: Path, docs: int, *, embedder: str = "hash", backend: str = "hybrid",
        alone: bool = True, keep: Path | None = None) -> dict[str, Any]:
    """The whole benchmark into the (empty) library at ``url``: the round together, then the check; the report."""
    base = keep or Path(tempfile.mkdtemp(prefix="dm-shared-writers-"))
    try:
        texts = load_docs(source, docs)
        folders = prepare(base, texts)
        half = len(texts) // 2
        by_machine = {"desktop": texts[:half], "laptop": texts[half:2 * half]}
        queries = [title_of(t) for t in texts[:2 * half:7]] or ["notes"]
        report: dict[str, Any] = {"url": redacted(url), "docs": 2 * half, "embedder": embedder, "backend": backend}
        report["together"] = run_round(url, base, folders, queries, embedder=embedder, backend=backend)
        report["verify"] = verify(url, base, folders, by_machine, queries, backend, embedder)
        return report
    finally:
        if keep is None:
            shutil.rmtree(base, ignore_errors=True)


def run_alone(urls: dict[str, str], source: Path, docs: int, embedder: str) -> dict[str, Any]:
    """Each writer alone, into its own empty library (the ``alone`` column): the same folders, one at a time."""
    base = Path(tempfile.mkdtemp(prefix="dm-shared-alone-"))
    try:
        folders = prepare(base, load_docs(source, docs))
        return {name: run_round(urls[name], base, {name: folders[name]}, [], embedder=embedder,
                                reader=False)["writers"][name] for name in WRITERS}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run_pair(url: str, source: Path, docs: int, embedder: str) -> dict[str, Any]:
    """Both writers together into their own empty library WITHOUT the reader (the ``no reader`` column): what the
    reader's searches cost the writers, apart from what the writers' taking turns costs them."""
    base = Path(tempfile.mkdtemp(prefix="dm-shared-pair-"))
    try:
        folders = prepare(base, load_docs(source, docs))
        found: dict[str, Any] = run_round(url, base, folders, [], embedder=embedder, reader=False)["writers"]
        return found
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url", help="an EMPTY PostgreSQL database with pgvector (the writer role)")
    ap.add_argument("--source", type=Path, default=SHARED_EVAL / "scifact",
                    help="a BEIR folder with corpus.jsonl, or a folder of Markdown files")
    ap.add_argument("--docs", type=int, default=1000, help="documents in all, half per writer")
    ap.add_argument("--embedder", choices=["hash", "local"], default="hash",
                    help="hash: 384-d feature hashing (the write path without model time); local: the bundled model")
    ap.add_argument("--backend", default="hybrid", help="the reader's search backend")
    ap.add_argument("--alone", nargs=2, metavar=("URL1", "URL2"),
                    help="two more empty databases: each writer alone in the same run, for the comparison column")
    ap.add_argument("--pair", metavar="URL3",
                    help="one more empty database: both writers together without the reader, in the same run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    report = run(args.url, args.source, args.docs, embedder=args.embedder, backend=args.backend)
    if args.alone:
        report["alone"] = run_alone(dict(zip(WRITERS, args.alone)), args.source, args.docs, args.embedder)
    if args.pair:
        report["pair"] = run_pair(args.pair, args.source, args.docs, args.embedder)
    problems = errors_of(report)
    if args.json:
        for part in (report["together"]["reader"] or {},):
            part.pop("latencies_ms", None)
        print(json.dumps({**report, "problems": problems}, indent=1, default=str))
    else:
        print(render(report))
        print("errors and lost documents: " + ("; ".join(problems) if problems else "none"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
