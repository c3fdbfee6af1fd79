#!/usr/bin/env bash
# The headless browser tests/cpu/test_report.py loads report.html in: Debian's chromium-headless-shell.
# Installed here, not in the test run (that runs without network, scripts/loopback.sh). Where apt-get
# cannot run (not root, not Debian, no mirror), the browser tests are skipped and say why.
set -u
command -v chromium-headless-shell >/dev/null && exit 0
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends chromium-headless-shell >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends chromium-headless-shell >/dev/null 2>&1; }
fi
command -v chromium-headless-shell >/dev/null \
    || echo "install_browser: chromium-headless-shell not installed (needs apt-get as root); browser tests will skip"
exit 0
