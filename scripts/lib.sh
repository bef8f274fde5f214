# Shared by the server scripts: `source "$(dirname "$0")/lib.sh"` after setting `name`.

say() { echo "$name: $*"; }
fail() {
  echo "$name: $*" >&2
  exit 1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    fail "need root to run: $*"
  fi
}
