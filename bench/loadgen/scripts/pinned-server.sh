# Sourced by the scripts beside it (from the repo root): start_server SCRIPT starts one bench
# server (bench/servers/SCRIPT) pinned to CPU 0 on a random port, with the caller's exported
# environment, and waits for its READY line. It sets SERVER (the pid), PORT and LOG (its
# output, a temporary file the caller removes with the server in its EXIT trap, which it sets
# before the call: a server that never gets ready ends the script with exit 1).
start_server() {
  LOG=$(mktemp)
  PORT=$((20000 + RANDOM % 20000))
  PORT=$PORT taskset -c 0 node_modules/.bin/node "bench/servers/$1" >"$LOG" 2>&1 &
  SERVER=$!
  for _ in $(seq 100); do grep -q READY "$LOG" && return 0; sleep 0.1; done
  cat "$LOG"
  exit 1
}
