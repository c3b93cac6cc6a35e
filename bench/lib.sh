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

# agreement_traces: sets $unit and $sized to agree.sh's two traces, generated when missing:
# Zipf $ALPHA (default 0.9) over $OBJECTS objects (20000), $REQUESTS requests (500000), seed 7;
# unit sizes, and sizes 1 to 4096 bytes. Sets $big to compare.sh's 10^7-request Zipf 0.8 trace
# when BIG=1 (else to nothing).
agreement_traces() {
  local o="${OBJECTS:-20000}" r="${REQUESTS:-500000}" a="${ALPHA:-0.9}"
  unit="$here/data/zipf${a}_${o}_${r}.oracleGeneral"
  sized="$here/data/zipf${a}_${o}_${r}_sized.oracleGeneral"
  [ -f "$unit" ] || "$cdnlab" gen-trace --out "$unit" --objects "$o" --requests "$r" --alpha "$a" --seed 7
  [ -f "$sized" ] || "$cdnlab" gen-trace --out "$sized" --objects "$o" --requests "$r" --alpha "$a" --seed 7 --size 1 --max-size 4096
  big=""
  if [ "${BIG:-0}" = 1 ]; then
    big="$here/data/zipf0.8_1000000_10000000.oracleGeneral"
    [ -f "$big" ] || "$cdnlab" gen-trace --out "$big" --objects 1000000 --requests 10000000 --alpha 0.8 --seed 1
  fi
}
