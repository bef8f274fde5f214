#!/usr/bin/env bash
# Makes sure a Redis server answers on 127.0.0.1:6379 (the gateway's shared rate-limit store),
# on a Debian machine: does nothing when one already answers, otherwise installs Debian's
# redis-server package if needed and starts a daemon without persistence. Safe to run again;
# prints what it did. REDIS_PORT overrides the port (tests).
set -euo pipefail

host=127.0.0.1
port=${REDIS_PORT:-6379}
wait_seconds=15

name=redis
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

answers() { command -v redis-cli >/dev/null && [ "$(redis-cli -h "$host" -p "$port" ping 2>/dev/null)" = PONG ]; }

install_server() {
  say "redis-server is not installed; installing Debian's redis-server package"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server
}

if answers; then
  say "already running on $host:$port"
  exit 0
fi

command -v redis-server >/dev/null && command -v redis-cli >/dev/null || install_server
command -v redis-server >/dev/null || fail "redis-server is still missing after installing the package"

log_file=/tmp/redis-$port.log
say "starting redis-server on $host:$port (no persistence; log in $log_file)"
# --dir /tmp: no dump is saved (--save ""), but Redis still needs a writable working directory.
redis-server --daemonize yes --bind "$host" --port "$port" --save "" --appendonly no \
  --dir /tmp --logfile "$log_file" --pidfile "/tmp/redis-$port.pid" \
  || fail "redis-server did not start; see $log_file"

for _ in $(seq 1 $((wait_seconds * 4))); do
  if answers; then
    say "answering on $host:$port"
    exit 0
  fi
  sleep 0.25
done
fail "no server answers PONG on $host:$port after ${wait_seconds}s; see $log_file"
