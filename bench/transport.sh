#!/usr/bin/env bash
# Transportation Problem solver benchmark, side by side on the same instances: cdnlab's network
# simplex (`cdnlab tp solve --json`) against POT's ot.emd (the LEMON network simplex) and HiGHS
# (scipy.optimize.linprog), same optimal cost required; plus cdnlab's warm re-solve after 1% of
# the demands change. Creates bench/.venv with pinned PyPI packages. See bench/transport.py.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
POT_VERSION=0.9.7.post1
SCIPY_VERSION=1.17.1
venv "$here/.venv" "ot, scipy" "pot==$POT_VERSION" "scipy==$SCIPY_VERSION" numpy
exec "$here/.venv/bin/python" "$here/transport.py" "$cdnlab" "$@"
