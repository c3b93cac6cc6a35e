#!/usr/bin/env bash
# The live edge under the attacks of the hardening issue, longer than the tests
# (crates/cdnlab-live/tests/abuse.rs), on loopback: for each attack, the edge's resident memory
# (from /proc), the p99 of 200 normal requests made meanwhile, and what the attackers got.
# Side by side with nginx where nginx has the feature (send_timeout; limit_conn per address).
#
#   bench/abuse.sh                 (about 9 minutes; installs Debian's nginx and wrk if missing)
#
# Attacks: slowloris (1,000 connections sending a head byte by byte), a connection flood from
# one address (2,000 held connections from 127.0.0.2), never-reading clients (100 requests for
# 8 MiB objects, never read), a replica scan (GET /replica/{f}/1 for 20,000 ids at one DHT
# edge), and a miss load of 1 KiB and 64 KiB objects against the capacity.
#
# Then the second round (bench/abuse2.py, about 6 minutes more, installs wrk if missing):
# never-reading connections from 8 addresses, slowloris from 5 addresses (both reopened),
# never-readers of 250 distinct 8 MiB misses, one 300 MB chunked object and wrk's random misses,
# each against the edge and nginx; then a player-report bomb and a /play flood against cdnlab
# alone (nginx has neither). Judged by the bar of the round-two issue: exits 1 if cdnlab misses
# it. ABUSE_ONLY=hostage,slowloris,... runs some of them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for tool in nginx wrk; do
  command -v $tool >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $tool >/dev/null
  }
done
ulimit -n 20000 2>/dev/null || true
python3 "$root/bench/abuse.py" "$root/target/release/cdnlab"
python3 "$root/bench/abuse2.py" "$root/target/release/cdnlab"
