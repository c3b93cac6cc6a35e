#!/usr/bin/env bash
# The walk-through of docs/replaying.md: one trace through bytes, admission, TTLs, a two-tier
# hierarchy and an S3-FIFO miss-ratio curve; prints each command's output and draws the
# figures into docs/img/replay/ (SVG).
#
#   bench/walkthrough.sh                      # the real sample in ../shared/traces
#   TRACE=cdn.oracleGeneral bench/walkthrough.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TRACE="${TRACE:-$root/../shared/traces/cloudPhysicsIO.oracleGeneral.bin}"
[ -f "$TRACE" ] || { echo "no trace at $TRACE (set TRACE=)" >&2; exit 1; }
img="$root/docs/img/replay"
mkdir -p "$img"
run() { echo; echo "\$ cdnlab $*"; "$cdnlab" "$@"; }
sizes=16MiB,64MiB,256MiB,1GiB
run trace-stats --trace "$TRACE" --no-plot
run cache-replay --trace "$TRACE" --policy lru,s3fifo,sieve --size "$sizes" --plot "$img/bytes.svg"
run cache-replay --trace "$TRACE" --policy lru,s3fifo,sieve --size "$sizes" --admission second-hit \
  --plot "$img/second-hit.svg"
for ttl in 5m 30m; do
  run cache-replay --trace "$TRACE" --policy lru,s3fifo --size 256MiB,1GiB --ttl "$ttl" --no-plot
done
run cache-hierarchy --trace "$TRACE" --edges 4 --edge-size 64MiB --parent-size 128MiB,512MiB,2GiB \
  --plot "$img/hierarchy.svg"
run mrc --trace "$TRACE" --policy s3fifo --size-unit bytes --sample 0.1 --exact-too --plot "$img/s3fifo-mrc.svg"
# The PNGs beside the SVGs are left out of the docs (the SVGs are what the page shows).
rm -f "$img"/*.png
