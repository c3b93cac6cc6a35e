#!/bin/bash
# Runs the shipped Slurm files end to end on the one-node cluster of single-node.sh, twice:
#   1. every shard succeeds: the merge runs and writes the report;
#   2. one shard fails on purpose (a wrapper around cdnlab exits 1 for shard 1): the merge,
#      submitted with --kill-on-invalid-dep=yes, is cancelled instead of pending for ever.
# Usage, as root on a machine you may turn into a Slurm node:
#   examples/slurm/single-node.sh && examples/slurm/try.sh [CDNLAB_BINARY]
# CDNLAB_ARGS defaults to two small experiments so that a try takes about a minute.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(realpath "${1:-$here/../../target/release/cdnlab}")"
[ -x "$bin" ] || { echo "no cdnlab binary at $bin (cargo build --release -p cdnlab-cli)" >&2; exit 2; }
work="$(mktemp -d /tmp/cdnlab-slurm-try.XXXXXX)"
cd "$work"
export CDNLAB_ARGS="${CDNLAB_ARGS:---only cache-che --only gwtw-e8}"

# Waits until job $1 has left the queue (at most $2 seconds); prints its final state.
wait_gone() {
  for _ in $(seq "$2"); do
    if [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]; then
      scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1
      return 0
    fi
    sleep 1
  done
  echo "job $1 still queued after $2 s: $(squeue -h -j "$1" -o '%T %r')" >&2
  return 1
}

echo "== 1. every shard succeeds"
out=$(CDNLAB="$bin" CDNLAB_OUT="$work/ok" "$here/submit.sh" 2 1)
echo "$out"
merge=$(echo "$out" | sed -n 's/.*merge job \([0-9]*\).*/\1/p')
state=$(wait_gone "$merge" 600)
echo "merge job $merge: $state"
[ "$state" = COMPLETED ] && [ -s "$work/ok/reproduce/report.html" ] || { echo "FAIL: no report" >&2; exit 1; }
grep -h "claims of the papers\|shard .* done" cdnlab-*.log | tail -3

echo "== 2. shard 1 fails on purpose"
cat > "$work/failing-cdnlab" <<WRAP
#!/bin/bash
case " \$* " in *" --shard 1/"*) echo "shard 1 fails on purpose" >&2; exit 1;; esac
exec "$bin" "\$@"
WRAP
chmod +x "$work/failing-cdnlab"
out=$(CDNLAB="$work/failing-cdnlab" CDNLAB_OUT="$work/failing" "$here/submit.sh" 2 2)
echo "$out"
merge=$(echo "$out" | sed -n 's/.*merge job \([0-9]*\).*/\1/p')
state=$(wait_gone "$merge" 600)
echo "merge job $merge: $state"
[ "$state" = CANCELLED ] || { echo "FAIL: the merge was not cancelled ($state)" >&2; exit 1; }
[ ! -e "$work/failing/reproduce/report.html" ] || { echo "FAIL: a report from a failed run" >&2; exit 1; }
echo "both tries as expected; logs and outputs in $work"
