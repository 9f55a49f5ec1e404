#!/usr/bin/env bash
# The load generator's own CPU in game mode, against one game peer (bench/servers/game-*.mjs):
# the server pinned to CPU 0, the loadgen to CPU 1, players arriving at RATE/s up to PLAYERS,
# then HOLD seconds with every player racing. Prints the mean of the loadgen's per-second
# `loadgen_cpu` (getrusage user+sys over wall time, % of one core) over the last HOLD seconds,
# with the players, keystrokes/s and the server's CPU (its own metrics line, GAME_METRICS_FILE) there. Run it from anywhere, under the
# benchmark lock on a shared machine:
#   heavy bench/loadgen/scripts/game-cpu.sh bench/loadgen/target/release/loadgen 4000
# PERF=file.data also records a `perf record` profile of the loadgen; EXTRA="--tick-us 0" adds
# loadgen options.
set -euo pipefail
BIN=$(realpath "$1"); PLAYERS=$2; RATE=${3:-250}; PEER=${4:-tachyon}; HOLD=${HOLD:-10}
cd "$(dirname "$0")/../../.."
ulimit -n 65536 2>/dev/null || true
. bench/loadgen/scripts/pinned-server.sh
METRICS=$(mktemp)
trap 'kill ${SERVER:-} 2>/dev/null || true; rm -f "${LOG:-}" "$METRICS"' EXIT
GAME_METRICS_FILE=$METRICS GAME_WAIT_SECONDS=2 start_server "game-$PEER.mjs"
# Arrivals, then the last room's wait (2 s) and countdown (3 s), then HOLD seconds.
DURATION=$(( (PLAYERS + RATE - 1) / RATE + 7 + HOLD ))
RUN=(taskset -c 1 "$BIN" game --url "ws://127.0.0.1:$PORT/ws" --protocol tachyon --rate "$RATE" \
  --max-players "$PLAYERS" --duration "$DURATION" --quiet --server-pid "$SERVER" --setup-timeout 60 ${EXTRA:-})
if [ -n "${PERF:-}" ]; then RUN=(perf record -q -o "$PERF" -- "${RUN[@]}"); fi
OUT=$("${RUN[@]}" || true)
echo "$OUT" | tail -1 | HOLD=$HOLD METRICS=$METRICS node_modules/.bin/node -e '
const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
const fs = require("fs");
const server = fs.readFileSync(process.env.METRICS, "utf8").trim().split("\n").map((l) => JSON.parse(l)).slice(-Number(process.env.HOLD) - 1, -1);
const rows = r.timeline.slice(-Number(process.env.HOLD));
const mean = (f) => rows.reduce((s, x) => s + (f(x) ?? 0), 0) / rows.length;
console.log(JSON.stringify({
  players: Math.min(...rows.map((x) => x.players)), racing: Math.min(...rows.map((x) => x.racing)),
  keystrokes_per_s: Math.round(mean((x) => x.keystrokes)), loadgen_cpu_pct: +mean((x) => x.loadgen_cpu).toFixed(1),
  loadgen_cpu_max_pct: Math.max(...rows.map((x) => x.loadgen_cpu)), key_p95_ms: rows.at(-1).key?.p95, ping_p95_ms: rows.at(-1).ping?.p95,
  server_cpu_pct: Math.round(server.reduce((s, m) => s + m.cpu, 0) / server.length), errors: r.errors, error_samples: r.error_samples.slice(0, 2),
}));'
