#!/usr/bin/env bash
# The edge's cache-hit rate against an earlier commit's, side by side in one run on loopback:
# both edges in front of one origin, the same 100 cached 1 KiB objects, wrk (2 threads, 64
# connections) against each in turn, PAIRS pairs alternating which goes first. Prints each
# pair's ratio (this checkout / the other) and their median.
#
#   bench/live-ab.sh COMMIT [PAIRS] [SECONDS]        (defaults 6 pairs of 5 s; about 3 minutes
#                                                     more for the first release build of COMMIT)
set -euo pipefail
other="${1:?usage: bench/live-ab.sh COMMIT [PAIRS] [SECONDS]}"
pairs="${2:-6}"; secs="${3:-5}"
. "$(dirname "$0")/lib.sh"
command -v wrk >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
}
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  git -C "$root" worktree remove --force "$work/tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git -C "$root" worktree add --detach "$work/tree" "$other" >/dev/null
(cd "$work/tree" && CARGO_TARGET_DIR="$root/target/ab-$other" cargo build --release --quiet -p cdnlab-cli)
old="$root/target/ab-$other/release/cdnlab"
origin=127.0.0.1:18180; new_edge=127.0.0.1:18181; old_edge=127.0.0.1:18182
"$cdnlab" live origin --listen "$origin" --objects 1000 2>/dev/null & pids+=($!)
"$cdnlab" live edge --origin "$origin" --listen "$new_edge" 2>/dev/null & pids+=($!)
"$old" live edge --origin "$origin" --listen "$old_edge" 2>/dev/null & pids+=($!)
sleep 1
for e in "$new_edge" "$old_edge"; do
  for i in $(seq 0 99); do curl -s -o /dev/null "http://$e/content/$i"; done
done
cat >"$work/hit.lua" <<'EOF'
local n = 0
request = function() n = n + 1; return wrk.format("GET", "/content/" .. (n % 100)) end
EOF
rate() { wrk -t2 -c64 -d"${secs}s" -s "$work/hit.lua" "http://$1" | awk '/Requests\/sec/ {print $2}'; }
ratios=()
for k in $(seq 1 "$pairs"); do
  if [ $((k % 2)) -eq 1 ]; then a=$(rate "$new_edge"); b=$(rate "$old_edge")
  else b=$(rate "$old_edge"); a=$(rate "$new_edge"); fi
  r=$(python3 -c "print(f'{$a / $b:.3f}')")
  ratios+=("$r")
  echo "pair $k: this checkout $a/s, $other $b/s, ratio $r"
done
python3 -c "import statistics, sys; r = sorted(map(float, sys.argv[1:])); print(f'median ratio {statistics.median(r):.3f} (min {r[0]:.3f}, max {r[-1]:.3f}) over {len(r)} pairs')" "${ratios[@]}"
