#!/usr/bin/env bash
# The join path's cost alone: players arrive at RATE/s up to PLAYERS and matchmake, upgrade,
# subscribe, join and ping, but never type (one keystroke every 1,000 s), so the server's CPU
# during the arrivals is the join path plus the pings, not the race. The server (one game
# peer, bench/servers/game-PEER.mjs) is pinned to CPU 0, the loadgen to CPU 1. Prints the
# server's CPU (utime + stime from /proc, % of one core) from 3 s after the start to the end
# of the arrivals, and the loadgen's errors. Run the peers alternately, under the benchmark
# lock on a shared machine:
#   heavy bench/loadgen/scripts/game-join-cpu.sh bench/loadgen/target/release/loadgen uws
#   heavy bench/loadgen/scripts/game-join-cpu.sh bench/loadgen/target/release/loadgen tachyon
set -euo pipefail
BIN=$(realpath "$1"); PEER=${2:-tachyon}; PLAYERS=${3:-3000}; RATE=${4:-150}
cd "$(dirname "$0")/../../.."
ulimit -n 65536 2>/dev/null || true
LOG=$(mktemp); OUT=$(mktemp)
PORT=$((20000 + RANDOM % 20000))
GAME_WAIT_SECONDS=2 PORT=$PORT taskset -c 0 node_modules/.bin/node "bench/servers/game-$PEER.mjs" >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -f "$LOG" "$OUT"' EXIT
for _ in $(seq 100); do grep -q READY "$LOG" && break; sleep 0.1; done
grep -q READY "$LOG" || { cat "$LOG"; exit 1; }
ARRIVALS=$(( (PLAYERS + RATE - 1) / RATE ))
ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
taskset -c 1 "$BIN" game --url "ws://127.0.0.1:$PORT/ws" --protocol tachyon --rate "$RATE" --max-players "$PLAYERS" \
  --duration $((ARRIVALS + 4)) --keystroke-ms 1000000 --quiet --server-pid "$SERVER" --setup-timeout 60 >"$OUT" || true &
GEN=$!
sleep 3; T0=$(ticks); sleep $((ARRIVALS - 3)); T1=$(ticks)
wait $GEN
HZ=$(getconf CLK_TCK)
ERRORS=$(node_modules/.bin/node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(r.errors)' "$OUT")
CPU=$(awk -v d="$((T1 - T0))" -v hz="$HZ" -v s="$((ARRIVALS - 3))" 'BEGIN { printf "%.1f", d * 100 / hz / s }')
echo "{\"peer\":\"$PEER\",\"players\":$PLAYERS,\"rate\":$RATE,\"server_cpu_pct\":$CPU,\"errors\":$ERRORS}"
