#!/usr/bin/env bash
# The load generator's own CPU per message in echo and fan-out modes, with the benchmark
# suite's loads (ws-echo-bin-32: 50 connections x 4 in flight, 32-byte binary; ws-fanout: 50
# subscribers, 10 sending bursts of 10, at most 16 bursts each in flight, Tachyon's envelope)
# against the raw uWS peer (bench/servers/uws.mjs) pinned to CPU 0, the loadgen to CPU 1.
# Prints messages (or deliveries) per second, `cpu_busy` (getrusage user+sys over the measured
# window) and the loadgen's CPU microseconds per message. Under the benchmark lock:
#   heavy bench/loadgen/scripts/ws-cpu.sh bench/loadgen/target/release/loadgen
set -euo pipefail
BIN=$(realpath "$1"); SECONDS_=${2:-4}
cd "$(dirname "$0")/../../.."
. bench/loadgen/scripts/pinned-server.sh
trap 'kill ${SERVER:-} 2>/dev/null || true; [ -z "${LOG:-}" ] || rm -f "$LOG" "$LOG.echo" "$LOG.fanout"' EXIT
start_server uws.mjs
U="ws://127.0.0.1:$PORT"
summary='const r = JSON.parse(require("fs").readFileSync(0, "utf8").trim().split("\n").pop());
const rate = r.msgs_per_s ?? r.delivered_per_s;
console.log(JSON.stringify({ mode: r.mode, ok: r.ok, per_s: Math.round(rate), cpu_busy: r.cpu_busy, cpu_us_per_msg: +(r.cpu_busy / rate * 1e6).toFixed(3) }));'
set +e
taskset -c 1 "$BIN" echo --url "$U/echo" --quiet --connections 50 --inflight 4 --size 32 --binary \
  --duration "$SECONDS_" --warmup 1 >"$LOG.echo"
echo "echo exit $?"
node_modules/.bin/node -e "$summary" <"$LOG.echo"
taskset -c 1 "$BIN" fanout --url "$U/fanout" --quiet --envelope --subscribers 50 --senders 10 --burst 10 \
  --interval-ms 0 --window 16 --size 64 --duration "$SECONDS_" --warmup 1 >"$LOG.fanout"
echo "fanout exit $?"
node_modules/.bin/node -e "$summary" <"$LOG.fanout"
