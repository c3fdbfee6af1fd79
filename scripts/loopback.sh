#!/usr/bin/env bash
# Run a command with every network listener and connection confined to loopback.
# Ray binds to the machine's routable address by default; inside a private network namespace whose
# only interface is `lo`, it falls back to 127.0.0.1. Needs root (or user namespaces); elsewhere the
# command runs as is, with a warning. XFINDER_NO_NETNS=1 skips the namespace.
set -euo pipefail
if [ "${XFINDER_NO_NETNS:-0}" != "1" ] && [ "${XFINDER_IN_NETNS:-0}" != "1" ] \
   && command -v unshare >/dev/null && unshare --net --pid --fork --mount-proc true 2>/dev/null; then
  export XFINDER_IN_NETNS=1
  exec unshare --net --pid --fork --mount-proc bash -c 'ip link set lo up && exec "$@"' bash "$@"
fi
[ "${XFINDER_IN_NETNS:-0}" = "1" ] || echo "loopback.sh: no private network namespace here; running as is" >&2
exec "$@"
