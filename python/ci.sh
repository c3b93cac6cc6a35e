#!/usr/bin/env bash
# The Python package's checks, run by .ci/run after `cargo test` (which builds target/debug/cdnlab,
# the command the answers are compared with): the package is built from this checkout into a
# fresh virtual environment with pip, as the README says, then pytest runs the tests, the
# notebook included (executed top to bottom with nbclient).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-ci
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "./python[test,notebook]"
cd python
# From outside the source folder, so the tests import the installed package, not ./cdnlab.
cd tests
target="$(cd ../.. && realpath "${CARGO_TARGET_DIR:-target}")"
CDNLAB_BIN="${CDNLAB_BIN:-$target/debug/cdnlab}" "../../$venv/bin/python" -m pytest -q -p no:cacheprovider .
