#!/usr/bin/env bash
# Stops the broker that kafka-start.sh started on 127.0.0.1:${KAFKA_PORT:-9092}, keeping its data
# (KAFKA_RESET_DATA=1 also deletes it). Waits up to 30 s for a clean shutdown, then kills.
set -euo pipefail

port=${KAFKA_PORT:-9092}
cache=${KAFKA_CACHE_DIR:-$HOME/.cache/billing-kafka}
pid_file="$cache/broker-$port.pid"

if [ -f "$pid_file" ]; then
  pid=$(cat "$pid_file")
  if kill -0 "$pid" 2>/dev/null; then
    echo "kafka: stopping the broker on 127.0.0.1:$port"
    kill "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pid_file"
fi
if [ "${KAFKA_RESET_DATA:-0}" = 1 ]; then rm -rf "$cache/data-$port"; fi
