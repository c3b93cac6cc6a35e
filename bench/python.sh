#!/usr/bin/env bash
# The Python package against the command and against POT, side by side in one run:
#   - cdnlab.replay of a 10^7-request trace against `cdnlab cache-replay` on the same trace
#     (LRU and FIFO at 10^4 and 10^5 objects, one worker each), alternated, medians of REPEATS;
#   - cdnlab.tp_solve against POT's ot.emd on the same 1000 x 1000 instance (same optimum, times).
#
#   bench/python.sh
#   REQUESTS=1000000 N=300 bench/python.sh     # smaller, for a quick check
#
# Makes bench/.venv-py with the package built from this checkout (pip install ./python) and POT.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
OBJECTS="${OBJECTS:-1000000}"
REQUESTS="${REQUESTS:-10000000}"
N="${N:-1000}"
REPEATS="${REPEATS:-5}"
venv="$here/.venv-py"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$root/python" POT
mkdir -p "$here/data"
trace="$here/data/zipf0.8_${OBJECTS}_${REQUESTS}.oracleGeneral"
[ -f "$trace" ] || "$cdnlab" gen-trace --out "$trace" --objects "$OBJECTS" --requests "$REQUESTS" --alpha 0.8 --seed 1
cd "$here"
exec "$venv/bin/python" "$here/python.py" "$cdnlab" "$trace" "$N" "$REPEATS"
