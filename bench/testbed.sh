#!/usr/bin/env bash
# Link fidelity of the testbed (docs/testbed.md#link-fidelity), as root:
#   - delay: one-way delay at 5-100 ms (and 20 +- 5 ms), goodput at 10 Mbit/s;
#   - rate: goodput at 1-100 Mbit/s;
#   - loss: 10,000 probes at 0.1%-10% loss;
#   - scale: 4 to 64 links carrying a TCP flow each at once (10 Mbit/s, 10 ms), with the link
#     element never spinning (the default) and spinning 200 us before each frame is due.
# Writes bench/results/testbed/*.csv and docs/img/testbed-*.svg; about 9 minutes on 2 cores.
#
#   sudo bench/testbed.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
out="$root/target/bench-testbed"
res="$here/results/testbed"
rm -rf "$out"
mkdir -p "$out" "$res"
for s in delay rate loss; do
  echo "== $s"
  "$cdnlab" testbed run "$here/testbed-$s.toml" --out "$out/$s" | tail -n +5
  cp "$out/$s/fidelity.csv" "$res/$s.csv"
  cp "$out/$s/fidelity.svg" "$root/docs/img/testbed-$s.svg"
done
# Scale: N node pairs, every link busy at once.
echo "== scale"
echo "links,spin_us,err_p50_ms_max,err_p99_ms_max,goodput_ratio_min,goodput_ratio_mean,cpu_us_per_frame_mean" > "$res/scale.csv"
# Spinning is measured to 32 links only: at 32 it already starves TCP.
for spin in 0 200; do
  ns="4 8 16 32 64"
  [ "$spin" = 0 ] || ns="4 8 16 32"
  for n in $ns; do
    f="$out/scale-$n-$spin.toml"
    {
      echo "name = \"scale-$n\""
      echo "spin_us = $spin"
      for i in $(seq 0 $((n - 1))); do printf '[[node]]\nname = "a%d"\n[[node]]\nname = "b%d"\n' "$i" "$i"; done
      for i in $(seq 0 $((n - 1))); do printf '[[link]]\na = "a%d"\nb = "b%d"\nrate = "10Mbit"\ndelay_ms = 10\nqueue_bytes = 62500\n' "$i" "$i"; done
      printf '[experiment]\nkind = "fidelity"\nprobes = 2000\nprobe_rate = 200\ngoodput_seconds = 10\nwarmup_seconds = 3\nconcurrent = true\n'
    } > "$f"
    "$cdnlab" testbed run "$f" --out "$out/scale-$n-$spin" > /dev/null
    python3 - "$out/scale-$n-$spin/fidelity.csv" "$n" "$spin" >> "$res/scale.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
f = lambda k: [float(r[k]) for r in rows]
print(f"{sys.argv[2]},{sys.argv[3]},{max(f('err_p50_ms')):.3f},{max(f('err_p99_ms')):.3f},"
      f"{min(f('goodput_ratio')):.4f},{sum(f('goodput_ratio'))/len(rows):.4f},{sum(f('cpu_us_per_frame'))/len(rows):.2f}")
PY
    tail -n 1 "$res/scale.csv"
  done
done
