#!/usr/bin/env bash
# Keyboard-only walkthrough under a real X server: add a folder, search, move through the results, exclude one,
# copy the context, open the Library, quit. Every step is a key a person presses (xdotool); screenshots of each
# step go to OUT. Needs: Xvfb, openbox, xdotool, xclip, ImageMagick (import). Uses a temp config/data folder.
#
#   scripts/keyboard_walkthrough.sh [OUT_DIR] [DISPLAY_NUMBER]      (defaults: /tmp/dm-walkthrough, 18)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-/tmp/dm-walkthrough}"
NUM="${2:-18}"
PY="${PYTHON:-python3}"
EVAL="${EVAL:-$ROOT/../shared/eval}"
export DISPLAY=":$NUM"
mkdir -p "$OUT"
WORK="$(mktemp -d /tmp/dm-walk-XXXX)"
mkdir -p "$WORK/notes"
cp "$EVAL"/mddocs/fastapi/{async,environment-variables,alternatives,benchmarks,features}.md "$WORK/notes/"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
if ! xdpyinfo >/dev/null 2>&1; then
  Xvfb "$DISPLAY" -screen 0 1600x1000x24 >/dev/null 2>&1 & pids+=($!)
  sleep 1
  openbox >/dev/null 2>&1 & pids+=($!)
  sleep 1
fi
step() { echo "== $1"; }
shot() { sleep "${2:-0.5}"; import -window root "$OUT/$1.png"; }

DESKTOP_MEMORY_CONFIG_DIR="$WORK/cfg" DESKTOP_MEMORY_DATA_DIR="$WORK/data" PYTHONPATH="$ROOT" \
  "$PY" -m desktop_memory.gui.app >"$OUT/app.log" 2>&1 & APP=$!; pids+=($APP)
for _ in $(seq 60); do xdotool search --name '^Desktop Memory$' >/dev/null 2>&1 && break; sleep 0.5; done
sleep 2
shot 01-start

step "File → Add folder (Ctrl+Shift+O), type the path, Enter"
xdotool key ctrl+shift+o; sleep 1.5; shot 02-folder-dialog 0
xdotool type --delay 10 "$WORK/notes"; xdotool key Return
sleep 6; shot 03-indexing 0

step "Ctrl+K, type a question"
xdotool key ctrl+k; xdotool type --delay 20 "environment variables"; sleep 2; shot 04-results 0

step "↓ ↓ moves into the results; Space toggles the third one in the context (weak matches start out)"
xdotool key Down; sleep 0.3; xdotool key Down; sleep 0.3; xdotool key space; sleep 1; shot 05-toggled 0

step "Ctrl+Shift+C copies the context"
xdotool key ctrl+shift+c; sleep 1
xclip -o -selection clipboard > "$OUT/clipboard.txt"
n=$(grep -c '^\[Source: ' "$OUT/clipboard.txt" || true)
echo "   clipboard: $n passages; first line: $(head -1 "$OUT/clipboard.txt")"
grep -q '^\[Source: notes/' "$OUT/clipboard.txt" || { echo "FAIL: context paths are not relative"; exit 1; }

step "Ctrl+2 opens the Library"
xdotool key ctrl+2; shot 06-library 1

step "Ctrl+Q quits"
xdotool key ctrl+q
for _ in $(seq 40); do kill -0 "$APP" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$APP" 2>/dev/null; then echo "FAIL: the window did not quit"; exit 1; fi
if grep -qi "ambiguous" "$OUT/app.log"; then echo "FAIL: Qt reported an ambiguous shortcut"; exit 1; fi
echo "OK: keyboard-only walkthrough passed; screenshots in $OUT"
