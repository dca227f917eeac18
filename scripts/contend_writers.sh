#!/bin/bash
# Issue 30 item 6: three `index --force` runs at once beside `desktop-memory watch` (an edit every 0.2 s) and a
# keyword search in a loop, on one database, ROUNDS times. Prints how many index runs failed and how many said they
# were waiting their turn. Usage (from a checkout): scripts/contend_writers.sh [ROUNDS] [OUT_DIR]
# Uses the hashing embedder (no model) and the Markdown docs in tests/data/eval/mddocs.
set -u
CODE=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-2}
OUT=${2:-$(mktemp -d)}
PYTHON=${PYTHON:-python}
rm -rf "$OUT"; mkdir -p "$OUT/cfg" "$OUT/data" "$OUT/w"
printf '[embedder]\nkind = "hash"\n[watch]\nquiet_ms = 100\n' > "$OUT/cfg/settings.toml"
export DESKTOP_MEMORY_CONFIG_DIR=$OUT/cfg DESKTOP_MEMORY_DATA_DIR=$OUT/data PYTHONPATH=$CODE
cli() { "$PYTHON" -m desktop_memory.cli --db "$OUT/x.db" "$@"; }
SRC=$CODE/tests/data/eval/mddocs
for i in 0 1 2; do mkdir -p "$OUT/in$i"; done
cp -r "$SRC/hugo" "$OUT/in0/"; cp -r "$SRC/fastapi" "$OUT/in1/"; cp -r "$SRC/hugo" "$OUT/in2/"
cp -r "$SRC/fastapi/advanced" "$OUT/w/"
cd "$CODE"
cli index "$OUT/w" -q >/dev/null 2>&1
"$PYTHON" -m desktop_memory.cli --db "$OUT/x.db" watch > "$OUT/watch.out" 2>&1 &
WATCH=$!
( while kill -0 $WATCH 2>/dev/null; do cli search "path parameters" --backend keyword >/dev/null 2>&1; done ) &
SEARCH=$!
fail=0; total=0; waited=0
for r in $(seq 1 "$ROUNDS"); do
  pids=()
  for i in 0 1 2; do
    ( cli index "$OUT/in$i" --force -q > "$OUT/r$r-$i.out" 2> "$OUT/r$r-$i.err"; echo $? > "$OUT/r$r-$i.rc" ) &
    pids+=($!)
  done
  for j in $(seq 1 20); do echo "edit $r $j" >> "$OUT/w/advanced/index.md"; sleep 0.2; done
  wait "${pids[@]}"
  for i in 0 1 2; do
    total=$((total + 1))
    grep -q "waiting for another" "$OUT/r$r-$i.err" && waited=$((waited + 1))
    if [ "$(cat "$OUT/r$r-$i.rc")" != 0 ]; then fail=$((fail + 1)); head -2 "$OUT/r$r-$i.err"; fi
  done
done
kill $WATCH; sleep 1; kill $SEARCH 2>/dev/null
echo "failed $fail of $total index runs; $waited said they were waiting their turn"
