# Sourced by the bench scripts: sets $here (bench/) and $root (the checkout), builds the release
# binaries, sets $cdnlab to the command, and defines `venv` for the Python side.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
(cd "$root" && cargo build --release --quiet)
cdnlab="$root/target/release/cdnlab"
mkdir -p "$here/data"

# venv DIR MODULES PACKAGE...: makes the virtual environment DIR if it is missing and installs
# PACKAGE... there unless `import MODULES` already works in it.
venv() {
  local dir="$1" modules="$2"
  shift 2
  [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
  "$dir/bin/python" -c "import $modules" 2>/dev/null ||
    "$dir/bin/pip" install --quiet --disable-pip-version-check "$@"
}
