#!/usr/bin/env bash
# The live-hardening tests run against the code from before the hardening (commit f600340),
# to show that each of them fails there: they would not catch a regression otherwise.
#
#   bench/abuse-before.sh          (about 6 minutes: a release build of the old tree)
#
# bench/abuse-before.patch ports the tests to the old API: fields and flags that did not exist
# are dropped (a DHT edge's capacity, the send timeout, the per-address cap, --drain-ms,
# --access-log), the replicas' bytes are summed from the catalogue, and the old edge gets the
# one gauge that shows its in-flight map (cdnlab_origin_fetches_in_flight). Assertions on
# metrics the old servers lack are skipped where a behavioural check follows. Expected: every
# test named below FAILS; the script exits 1 if one passes.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
old="$(mktemp -d)/before"
trap 'git -C "$root" worktree remove --force "$old" >/dev/null 2>&1' EXIT
git -C "$root" worktree add --detach "$old" f600340 >/dev/null
git -C "$old" apply "$root/bench/abuse-before.patch"
export CARGO_TARGET_DIR="$root/target/before"
run() { # package, test target, filter...
  local pkg=$1 target=$2
  shift 2
  (cd "$old" && cargo test --release -p "$pkg" $target -- "$@" 2>&1) |
    grep -a -E "^test .* (ok|FAILED)$|^  left|^ right|bytes of the endless|^pa keeps|RSS [0-9]+ above|^[0-9]+ / [0-9]+$" || true
}
out="$(
  run cdnlab-live "--test abuse"
  run cdnlab-live "--test hostile" idle_connections smuggling connection_limit
  run cdnlab-live "--test steer" flood huge
  run cdnlab "--lib" a_flood_leaves_every_population_a_share
  run cdnlab-cli "--test cli" sigterm edge_memory steering_failures
)"
echo "$out"
if grep -q " ok$" <<<"$out" || [ "$(grep -c " FAILED$" <<<"$out")" -ne 14 ]; then
  echo "some hardening test passes on the old code: it does not catch its finding" >&2
  exit 1
fi
echo "every hardening test fails on the code from before the hardening"
