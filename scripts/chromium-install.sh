#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (playwright-core drives it;
# no browser download of Playwright's own). Prints the path of the binary.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(command -v chromium)"
  exit 0
fi
echo "chromium: installing Debian's chromium package"
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
echo "chromium: $(command -v chromium)"
