#!/bin/bash
# Submits the reproduction as a Slurm array of SHARDS tasks, at most AT_ONCE running at a time
# (the array's %N throttle), and the merge after it; the merge is cancelled if a shard fails.
#   examples/slurm/submit.sh [SHARDS [AT_ONCE]]   (defaults 4 and SHARDS; settings as in
#                                                  reproduce.sbatch; CDNLAB_OUT must be shared)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
shards=${1:-4}
at_once=${2:-$shards}
case "$shards$at_once" in *[!0-9]*|"") echo "usage: $0 [SHARDS [AT_ONCE]] (whole numbers)" >&2; exit 2;; esac
array=$(sbatch --parsable --array="0-$((shards - 1))%$at_once" "$here/reproduce.sbatch")
merge=$(sbatch --parsable --kill-on-invalid-dep=yes --dependency="afterok:${array%%;*}" "$here/merge.sbatch")
echo "array job $array ($shards shards, at most $at_once at once), merge job $merge; results in ${CDNLAB_OUT:-out/slurm}/reproduce"
