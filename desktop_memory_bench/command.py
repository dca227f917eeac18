"""The ``bench`` subcommand: argument parsing and output. The work is in runner.py and scale.py.

``desktop-memory bench`` finds :func:`add_bench_parser` through the ``desktop_memory.cli_commands`` entry point
(pyproject.toml): the app never imports this package.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_memory.config import BACKENDS, Settings
from desktop_memory.errors import UserError

if TYPE_CHECKING:
    from .runner import BenchOptions

_P = TypeVar("_P", bound=argparse.ArgumentParser)


def _backends(text: str) -> list[str]:
    names = [b.strip() for b in text.split(",") if b.strip()]
    bad = [b for b in names if b not in BACKENDS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"backends must be a comma list of {', '.join(BACKENDS)}")
    return names


def _sizes(text: str) -> list[int]:
    out = []
    for given in text.split(","):
        part = given.strip().lower().replace("_", "")
        mult = 1
        if part[-1:] in ("k", "m"):
            part, mult = part[:-1], 1000 if part.endswith("k") else 1_000_000
        try:
            n = int(float(part) * mult)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"not a chunk count: {text!r} (e.g. 100000 or 100k,300k)") from exc
        if n <= 0:
            raise argparse.ArgumentTypeError("chunk counts must be positive")
        out.append(n)
    return sorted(set(out))


def add_bench_parser(subparsers: argparse._SubParsersAction[_P]) -> _P:
    p = subparsers.add_parser(
        "bench",
        help="retrieval quality, indexing speed, latency and memory on a BEIR-format dataset",
        description="Index a BEIR folder (corpus.jsonl, queries.jsonl, qrels.tsv) through the real pipeline "
        "(cached by dataset + model + chunk settings), run every query through the real search path and "
        "report nDCG@10, Recall@100, MRR@10, index throughput, query latency and memory. "
        "With --scale N, measure store and query cost at N synthetic chunks instead.",
    )
    p.add_argument("dataset", type=Path, help="BEIR folder, e.g. shared/eval/scifact")
    p.add_argument("--backends", type=_backends, default=list(BACKENDS),
                   help="comma list of hybrid,keyword,bm25,dense (default: all)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.add_argument("--out", type=Path, default=None, help="also write the JSON report to this file")
    p.add_argument("--split", choices=("test", "train"), default="test",
                   help="query split: test (queries.jsonl/qrels.tsv) or train (queries_train.jsonl/qrels_train.tsv)")
    p.add_argument("--limit-queries", type=int, default=None, metavar="N", help="only the first N judged queries")
    p.add_argument("--db", type=Path, default=None,
                   help="index database to reuse/keep (default: a cache in the data folder keyed by dataset, "
                   "model and chunk settings)")
    p.add_argument("--rebuild", action="store_true", help="re-index even if a matching cached index exists")
    p.add_argument("--top-k", type=int, default=None,
                   help="results per query in the latency pass (default: the app's top_k, 10)")
    p.add_argument("--depth", type=int, default=100, help="documents ranked per query for the metrics (default 100)")
    p.add_argument("--repeat", type=int, default=1, help="latency passes over the query set (default 1)")
    p.add_argument("--nonsense", type=int, default=300, metavar="N",
                   help="generated nonsense queries per backend for the weak-match figure (default 300; 0 = skip)")
    p.add_argument("--no-baseline", dest="baseline", action="store_false",
                   help="skip the naive fixed-padding embedding baseline")
    p.add_argument("--doc-format", choices=("md", "txt"), default="md",
                   help="how each corpus document becomes a file: md = '# title' heading + text (the Markdown "
                   "chunker carries the title into every chunk), txt = title line + text (default md)")
    p.add_argument("--embedder", choices=("local", "openai", "hash"), default="local",
                   help="local = the app's default model; openai = an OpenAI-compatible server (--embedder-url); "
                   "hash = a meaningless test fake (fast)")
    srv = p.add_argument_group("model servers (--embedder openai; an API key comes from the app's store or "
                               "DESKTOP_MEMORY_EMBEDDER_API_KEY / DESKTOP_MEMORY_RERANK_API_KEY)")
    srv.add_argument("--embedder-url", default=None, help="OpenAI-compatible base URL, e.g. http://localhost:8080/v1")
    srv.add_argument("--embedder-model", default=None, help="model name on that server (prefixes of known models "
                     "such as e5 and nomic are applied as in the app)")
    srv.add_argument("--query-prefix", default=None, help="override the query prefix")
    srv.add_argument("--document-prefix", default=None, help="override the document prefix (part of the cache key)")
    srv.add_argument("--rerank-url", default=None, help="rerank every query's top passages on this /v1/rerank "
                     "server (the app's rerank stage)")
    srv.add_argument("--rerank-model", default=None, help="reranking model name")
    srv.add_argument("--rerank-depth", type=int, default=None, help="passages reranked per query (default 30)")
    srv.add_argument("--rerank-timeout", type=float, default=None, help="seconds (default the app's 2)")
    p.add_argument("--per-query", type=Path, default=None, help="write per-query metrics (JSON) to this file")
    p.add_argument("--postgres", default=None, metavar="URL",
                   help="also run it on a PostgreSQL library: the SQLite library is copied (without re-embedding) "
                   "into the database at this postgresql:// URL (with pgvector; reused when it already holds it) "
                   "and both stores' tables are printed (with --scale: each step on both)")
    tune = p.add_argument_group("search/chunk overrides (default: the app's defaults)")
    tune.add_argument("--fusion", choices=("zscore", "rrf"), default=None, help="how the two lanes are fused")
    tune.add_argument("--keyword-term-budget", type=int, default=None,
                      help="postings budget of the keyword lane's term planner (0 = exact BM25 always)")
    tune.add_argument("--keyword-weight", type=float, default=None, help="the keyword lane's weight in the fusion")
    tune.add_argument("--dense-weight", type=float, default=None, help="the semantic lane's weight in the fusion")
    tune.add_argument("--rrf-k", type=int, default=None, help="the k of reciprocal-rank fusion")
    tune.add_argument("--overfetch", type=int, default=None, help="candidates fetched per lane for each result")
    tune.add_argument("--chunk-target", type=int, default=None, help="ChunkSettings.target_chars")
    tune.add_argument("--chunk-max", type=int, default=None, help="ChunkSettings.max_chars")
    tune.add_argument("--max-tokens", type=int, default=None,
                      help="EmbedderSettings.max_tokens: where the model's input is truncated (default 256)")
    sc = p.add_argument_group("scale mode")
    sc.add_argument("--scale", type=_sizes, default=None, metavar="N[,N...]",
                    help="measure store/query cost at N chunks (e.g. 100k,300k), reusing the dataset's real chunk "
                    "texts and vectors (recombined, perturbed)")
    sc.add_argument("--scale-queries", type=int, default=200, help="queries timed per scale step (default 200)")
    sc.add_argument("--scale-db", type=Path, default=None,
                    help="where to build the synthetic index (default: a temporary file, deleted afterwards); an "
                    "existing one that an earlier --scale run built is grown from where it is")
    sc.add_argument("--no-app-probe", dest="app_probe", action="store_false",
                    help="skip the fresh app process that indexes 200 documents into each step's library")
    p.set_defaults(func=run_bench)
    return p


def _options(args: argparse.Namespace) -> BenchOptions:
    from .runner import BenchOptions

    overridable = ("fusion", "keyword_term_budget", "keyword_weight", "dense_weight", "rrf_k", "overfetch")
    search = {k: getattr(args, k) for k in overridable if getattr(args, k, None) is not None}
    chunk = {}
    if args.chunk_target is not None:
        chunk["target_chars"] = args.chunk_target
    if args.chunk_max is not None:
        chunk["max_chars"] = args.chunk_max
    return BenchOptions(
        dataset=args.dataset, backends=args.backends, split=args.split, limit_queries=args.limit_queries,
        db=args.db, rebuild=args.rebuild, top_k=args.top_k, depth=args.depth, repeat=args.repeat,
        nonsense=max(0, args.nonsense),
        baseline=args.baseline, embedder=args.embedder, search_overrides=search, chunk_overrides=chunk,
        doc_format=args.doc_format, max_tokens=args.max_tokens, servers=_servers(args),
    )


def _servers(args: argparse.Namespace) -> dict[str, Any]:
    """The model-server flags that were given, as setting names (runner.bench_settings applies them)."""
    names = {"embedder_url": "openai_url", "embedder_model": "openai_model", "query_prefix": "query_prefix",
             "document_prefix": "document_prefix", "rerank_url": "rerank_url", "rerank_model": "rerank_model",
             "rerank_depth": "rerank_depth", "rerank_timeout": "rerank_timeout_s"}
    given = {setting: getattr(args, flag) for flag, setting in names.items() if getattr(args, flag) is not None}
    if args.embedder != "openai" and ({"openai_url", "openai_model"} & given.keys()):
        raise UserError("--embedder-url and --embedder-model need --embedder openai.")
    if args.embedder == "openai" and not given.get("openai_model"):
        raise UserError("--embedder openai needs --embedder-model (the model's name on the server).")
    if "rerank_url" not in given and given.keys() & {"rerank_model", "rerank_depth", "rerank_timeout_s"}:
        raise UserError("--rerank-model, --rerank-depth and --rerank-timeout need --rerank-url.")
    return given


def _clean(obj: Any) -> Any:
    """JSON-safe: NaN/inf become null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _require_bench_extra() -> None:
    """The app installs without the benchmark's dependencies: say what to install instead of a traceback."""
    import importlib.util

    missing = [m for m in ("ir_measures", "psutil") if importlib.util.find_spec(m) is None]
    if missing:
        from desktop_memory.harness import BENCH_INSTALL_HINT

        raise UserError(f"{BENCH_INSTALL_HINT} Missing: {', '.join(missing)}.")


def run_bench(args: argparse.Namespace, settings: Settings | None = None) -> int:
    """Run the benchmark (the CLI has already checked the settings file; the runner reads its own)."""
    _require_bench_extra()
    from .table import format_report, format_scale

    if not args.dataset.is_dir():
        from .eval_data import missing_data

        raise UserError(missing_data(args.dataset, "a BEIR folder: corpus.jsonl, queries.jsonl, qrels.tsv"))
    opts = _options(args)
    postgres = getattr(args, "postgres", None)
    if postgres is not None:  # a wrong URL is said before the long work, in one sentence
        from .postgres_side import check_postgres

        check_postgres(postgres)
    if args.scale:
        from .scale import run_scale

        report = run_scale(opts, args.scale, n_queries=args.scale_queries, scale_db=args.scale_db,
                           postgres=postgres, app_probe=getattr(args, "app_probe", True))
        text = format_scale(report)
    else:
        from .runner import run_dataset

        report = run_dataset(opts)
        per_query = report.pop("_per_query", None)
        if args.per_query and per_query is not None:
            args.per_query.write_text(json.dumps(per_query, indent=1))
        text = format_report(report)
        if postgres is not None:
            from .postgres_side import format_side, run_side

            ratio = report["index"].get("chunks_per_doc") or 1.0
            overfetch = report["settings"]["search"]["overfetch"]
            depth = min(4096 // max(1, overfetch), max(opts.depth, math.ceil(opts.depth * ratio * 2)))
            top_k = int(opts.top_k or report["settings"]["search"]["top_k"])
            report["postgres"] = run_side(opts, Path(report["db"]), postgres, chunk_depth=depth, top_k=top_k,
                                          log=opts.log or (lambda m: print(m, file=sys.stderr, flush=True)))
            text += "\n\n" + format_side(report["backends"], report["postgres"])
    report = _clean(report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(text)
    sys.stdout.flush()
    return 0
