#!/usr/bin/env bash
# Usage: scripts/timeline-reader/read.sh TIMELINE.json
# Loads a timeline with Chrome DevTools' trace engine (read.mjs says what it prints). The engine
# comes from the npm registry, pinned by package-lock.json, installed once per machine under
# ~/.cache/nicsim (NICSIM_CACHE moves it). Needs node and npm (Debian: nodejs, npm).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for t in node npm; do
  if ! command -v "$t" >/dev/null 2>&1; then
    echo "timeline-reader: $t is not installed; install it with: apt-get install -y nodejs npm" >&2
    exit 2
  fi
done
key=$(cat "$here/package-lock.json" | sha256sum | cut -c1-16)
dir="${NICSIM_CACHE:-$HOME/.cache/nicsim}/timeline-reader-$key"
if [ ! -d "$dir/node_modules/@paulirish/trace_engine" ]; then
  tmp="$dir.part.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  cp "$here/package.json" "$here/package-lock.json" "$tmp/"
  (cd "$tmp" && npm ci --silent --no-audit --no-fund >&2)
  rm -rf "$dir"; mv "$tmp" "$dir"
fi
cp "$here/read.mjs" "$dir/read.mjs"
exec node "$dir/read.mjs" "$1"
