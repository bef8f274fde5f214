#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (playwright-core drives it;
# no browser download of Playwright's own). Prints the path of the binary.
set -euo pipefail

# fonts-noto-cjk: most buyers read zh-TW, and without a CJK font a screenshot shows its text as boxes.
packages=()
command -v chromium >/dev/null 2>&1 || packages+=(chromium)
fc-list 2>/dev/null | grep -qi 'Noto Sans CJK' || packages+=(fonts-noto-cjk)
if [ ${#packages[@]} -gt 0 ]; then
  echo "chromium: installing Debian's ${packages[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${packages[@]}" >/dev/null
fi
echo "chromium: $(command -v chromium)"
