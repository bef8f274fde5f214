#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers on 127.0.0.1:5432 for user postgres without a password,
# on a Debian machine: starts the existing clusters, or installs Debian's postgresql package
# first when no server is installed, then lets postgres in over 127.0.0.1 without a password
# (trust). Safe to run again; prints what it did. POSTGRES_PORT overrides the port (tests).
set -euo pipefail

host=127.0.0.1
port=${POSTGRES_PORT:-5432}
wait_seconds=30

name=postgres
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

answers() { command -v pg_isready >/dev/null && pg_isready -q -h "$host" -p "$port"; }

# "<version> <name> <port> <status>" per Debian cluster (the version is the folder under /etc/postgresql).
clusters() { command -v pg_lsclusters >/dev/null && pg_lsclusters -h | awk '{ print $1, $2, $3, $4 }' || true; }

server_installed() { compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; }

install_server() {
  say "no PostgreSQL server installed; installing Debian's postgresql package"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
}

create_cluster_if_none() {
  [ -n "$(clusters)" ] && return
  local version
  version=$(find /usr/lib/postgresql -path '*/bin/postgres' | awk -F/ '{ print $5 }' | sort -V | tail -n 1)
  say "PostgreSQL $version is installed without a cluster; creating $version/main"
  as_root pg_createcluster "$version" main
}

start_clusters() {
  local version name cluster_port status
  while read -r version name cluster_port status; do
    if [[ $status == online* ]]; then
      say "cluster $version/$name (port $cluster_port) is already online"
    else
      say "starting cluster $version/$name (port $cluster_port)"
      as_root pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start \
        || fail "could not start cluster $version/$name; see /var/log/postgresql/postgresql-$version-$name.log"
    fi
  done < <(clusters)
}

wait_until_ready() {
  for _ in $(seq 1 "$wait_seconds"); do
    answers && return
    sleep 1
  done
  fail "no server answers on $host:$port after ${wait_seconds}s (pg_isready); check pg_lsclusters and /var/log/postgresql"
}

# Connects as postgres over TCP without a password; never prompts (-w).
connects_without_password() {
  env -u PGPASSWORD psql -w -h "$host" -p "$port" -U postgres -d postgres -Atqc 'SELECT 1' 2>"$psql_errors" >/dev/null
}

ensure_trust_auth() {
  if connects_without_password; then
    say "user postgres connects over $host without a password"
    return
  fi
  grep -qiE 'password|authentication|pg_hba' "$psql_errors" || fail "cannot connect as postgres: $(cat "$psql_errors")"
  local version name hba line="host all all 127.0.0.1/32 trust"
  read -r version name _ < <(clusters | awk -v p="$port" '$3 == p') || true
  [ -n "${version:-}" ] || fail "a password is demanded, but no Debian cluster listens on port $port to configure"
  hba="/etc/postgresql/$version/$name/pg_hba.conf"
  if ! as_root grep -qxF "$line" "$hba"; then
    say "a password is demanded; adding '$line' at the top of $hba"
    as_root sh -c 'f=$1; { printf "%s\n" "$2"; cat "$f"; } > "$f.new" && cat "$f.new" > "$f" && rm "$f.new"' _ "$hba" "$line"
  fi
  say "reloading cluster $version/$name"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" "$name" reload
  connects_without_password || fail "still cannot connect as postgres without a password: $(cat "$psql_errors")"
  say "user postgres now connects over $host without a password"
}

psql_errors=$(mktemp)
trap 'rm -f "$psql_errors"' EXIT

if answers; then
  say "already running on $host:$port"
  exit 0
fi

if [ -z "$(clusters)" ]; then
  server_installed || install_server
  create_cluster_if_none
fi
start_clusters
wait_until_ready
say "answering on $host:$port"
ensure_trust_auth
