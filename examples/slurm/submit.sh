#!/bin/bash
# Submits the reproduction as a Slurm array of SHARDS tasks and the merge after it.
#   examples/slurm/submit.sh [SHARDS]        (default 4; settings as in reproduce.sbatch)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
shards=${1:-4}
array=$(sbatch --parsable --array="0-$((shards - 1))" "$here/reproduce.sbatch")
merge=$(sbatch --parsable --dependency="afterok:${array%%;*}" "$here/merge.sbatch")
echo "array job $array ($shards shards), merge job $merge; results in ${CDNLAB_OUT:-out/slurm}/reproduce"
