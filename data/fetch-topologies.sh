#!/usr/bin/env bash
# Installs topohub (PyPI, pinned) into a virtual environment and exports every network it ships
# (707 in 1.5.1: 203 Internet Topology Zoo, 26 SNDlib, 98 CAIDA, 20 backbone, 360 Gabriel) as
# node-link JSON files that `cdnlab topo` and the simulator read. Nothing downloads at run time:
# run this once, then point cdnlab at the folder.
#
#   data/fetch-topologies.sh                 # into data/topologies/topohub/ (not committed)
#   data/fetch-topologies.sh --out DIR       # somewhere else
#   data/fetch-topologies.sh --committed     # also rewrite the sample committed under
#                                            # data/topologies/{sndlib,zoo}/ (see its README)
#
# Then: cdnlab topo stats --csv data/topologies/topohub > networks.csv
#
# Environment: TOPOHUB_VERSION (default 1.5.1); TOPOHUB_VENV (default data/.venv-topohub).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
out="$here/topologies/topohub"
committed=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --committed) committed=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (allowed: --out DIR, --committed)" >&2; exit 2 ;;
  esac
done
version="${TOPOHUB_VERSION:-1.5.1}"
venv="${TOPOHUB_VENV:-$here/.venv-topohub}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import topohub, sys; sys.exit(topohub.__version__ != '$version')" 2>/dev/null ||
  "$venv/bin/pip" install --quiet --disable-pip-version-check "topohub==$version"

# The package's data folder holds one JSON file per network: GROUP/NAME.json (Gabriel graphs
# GROUP/SIZE/INDEX.json). topohub.get() reads them as they are; they are copied as they are, so
# the export is exactly what topohub ships. Written to a temporary folder, then moved into place.
tmp="$(mktemp -d "${out%/}.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
"$venv/bin/python" - "$tmp" <<'PY'
import importlib.resources, json, pathlib, sys
import topohub
out = pathlib.Path(sys.argv[1])
data = importlib.resources.files(topohub) / "data"
count = 0
def walk(d, rel):
    global count
    for e in sorted(d.iterdir(), key=lambda e: e.name):
        if e.is_dir():
            walk(e, rel + [e.name])
        elif e.name.endswith(".json"):
            key = "/".join(rel + [e.name[:-5]])
            topo = topohub.get(key)  # checks it loads, as a user of topohub would
            dest = out.joinpath(*rel, e.name)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(e.read_bytes())
            count += 1
walk(data, [])
print(f"exported {count} networks from topohub {topohub.__version__}", file=sys.stderr)
PY
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out"

if [ "$committed" = 1 ]; then
  (cd "$root" && cargo build --release --quiet)
  cdnlab="$root/target/release/cdnlab"
  # Every SNDlib network, and a sample of the Topology Zoo: one version of each network, sizes
  # from 11 to 74 nodes, every continent the Zoo covers (data/topologies/README.md says why).
  zoo="abilene attmpls bellcanada btnorthamerica cernet dfn funet garr201201 geant2012 grnet
       heanet iij internetmci janetbackbone karen kreonet nsfnet psinet rediris renater2010
       sinet sprint sunet surfnet switchl3 uninett2011 uunet vtlwavenet2011 widejpn chinanet"
  rm -rf "$here/topologies/sndlib" "$here/topologies/zoo"
  mkdir -p "$here/topologies/sndlib" "$here/topologies/zoo"
  for f in "$out"/sndlib/*.json; do
    "$cdnlab" topo convert "$f" "$here/topologies/sndlib/$(basename "$f")" >/dev/null
  done
  for n in $zoo; do
    # topohub names its Zoo files as the Zoo does (Abilene.json, AttMpls.json).
    f="$(find "$out/topozoo" -maxdepth 1 -iname "$n.json" | head -1)"
    [ -n "$f" ] || { echo "error: topohub $version has no Zoo network $n" >&2; exit 1; }
    "$cdnlab" topo convert "$f" "$here/topologies/zoo/$n.json" >/dev/null
  done
  echo "rewrote data/topologies/sndlib ($(ls "$here/topologies/sndlib" | wc -l) networks) and data/topologies/zoo ($(ls "$here/topologies/zoo" | wc -l))"
fi
