#!/usr/bin/env bash
# GWTW simulator benchmark: requests per second per core, memory per user and per server, and
# the time of one E2 point at n = 10^5 on 2 cores. See bench/gwtw.py.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
exec python3 "$here/gwtw.py" "$cdnlab"
