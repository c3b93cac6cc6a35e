#!/usr/bin/env bash
# Multi-hash DHT simulator benchmark: requests per second per core with RBS probes and ring
# lookups at N = 10^4, M = 10^6, K = 1024, and peak memory at N = 10^5, M = 10^6. See
# bench/multihash.py.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
exec python3 "$here/multihash.py" "$cdnlab"
