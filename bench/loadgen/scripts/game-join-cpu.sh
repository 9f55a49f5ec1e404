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
usage() {
  echo "usage: $0 LOADGEN [PEER (tachyon)] [PLAYERS (3000)] [RATE (150)]: whole numbers, at least 5 s of arrivals" >&2
  exit 2
}
[[ $# -ge 1 && -x ${1:-} ]] || usage
BIN=$(realpath "$1"); PEER=${2:-tachyon}; PLAYERS=${3:-3000}; RATE=${4:-150}
[[ $PLAYERS =~ ^[1-9][0-9]*$ && $RATE =~ ^[1-9][0-9]*$ ]] || usage
# The window starts 3 s in and ends with the arrivals: it needs a few seconds of them.
ARRIVALS=$(( (PLAYERS + RATE - 1) / RATE ))
((ARRIVALS >= 5)) || usage
cd "$(dirname "$0")/../../.."
ulimit -n 65536 2>/dev/null || true
. bench/loadgen/scripts/pinned-server.sh
OUT=$(mktemp)
trap 'kill ${SERVER:-} 2>/dev/null || true; rm -f "${LOG:-}" "$OUT"' EXIT
GAME_WAIT_SECONDS=2 start_server "game-$PEER.mjs"
ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
taskset -c 1 "$BIN" game --url "ws://127.0.0.1:$PORT/ws" --protocol tachyon --rate "$RATE" --max-players "$PLAYERS" \
  --duration $((ARRIVALS + 4)) --keystroke-ms 1000000 --quiet --setup-timeout 60 >"$OUT" || true &
GEN=$!
sleep 3; T0=$(ticks); sleep $((ARRIVALS - 3)); T1=$(ticks)
wait $GEN
HZ=$(getconf CLK_TCK)
ERRORS=$(node_modules/.bin/node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(r.errors)' "$OUT")
CPU=$(awk -v d="$((T1 - T0))" -v hz="$HZ" -v s="$((ARRIVALS - 3))" 'BEGIN { printf "%.1f", d * 100 / hz / s }')
echo "{\"peer\":\"$PEER\",\"players\":$PLAYERS,\"rate\":$RATE,\"server_cpu_pct\":$CPU,\"errors\":$ERRORS}"
