# Sourced by the bench scripts that compare with libCacheSim: makes bench/.venv with PyPI
# libcachesim ($LIBCACHESIM_VERSION, default 0.3.5) if missing, and builds the cdnlab binary
# into $cdnlab. Expects $here (bench/) and $root (the checkout).
LIBCACHESIM_VERSION="${LIBCACHESIM_VERSION:-0.3.5}"
if [ ! -x "$here/.venv/bin/python" ]; then
  python3 -m venv "$here/.venv"
fi
if ! "$here/.venv/bin/python" -c "import libcachesim" 2>/dev/null; then
  "$here/.venv/bin/pip" install --quiet "libcachesim==$LIBCACHESIM_VERSION"
fi
(cd "$root" && cargo build --release --quiet -p cdnlab-cli)
cdnlab="$root/target/release/cdnlab"
mkdir -p "$here/data"
