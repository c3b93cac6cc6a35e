#!/usr/bin/env bash
# Transportation Problem solver benchmark, side by side on the same instances: cdnlab's network
# simplex (`cdnlab tp solve --json`) against POT's ot.emd (the LEMON network simplex) and HiGHS
# (scipy.optimize.linprog), same optimal cost required; plus cdnlab's warm re-solve after 1% of
# the demands change. Creates bench/.venv with pinned PyPI packages. See bench/transport.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
POT_VERSION=0.9.7.post1
SCIPY_VERSION=1.17.1
(cd "$root" && cargo build --release --quiet)
if [ ! -x "$here/.venv/bin/python" ]; then
  python3 -m venv "$here/.venv"
fi
if ! "$here/.venv/bin/python" -c "import ot, scipy" 2>/dev/null; then
  "$here/.venv/bin/pip" install --quiet "pot==$POT_VERSION" "scipy==$SCIPY_VERSION" numpy
fi
exec "$here/.venv/bin/python" "$here/transport.py" "$root/target/release/cdnlab" "$@"
