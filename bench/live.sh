#!/usr/bin/env bash
# Live edge load benchmark, side by side in one run on loopback: cache-hit throughput and
# latency of one cdnlab edge against nginx with proxy_cache in front of the same cdnlab origin,
# same objects, same wrk load, on this machine's 2 cores. Then checks the edge's /metrics with
# promtool. Installs Debian's wrk, nginx and prometheus (for promtool) if missing.
#
#   bench/live.sh [SECONDS] [CONNECTIONS] [ROUNDS]     (defaults 10, 64, 3)
#
# Objects: 100 objects of 1 KiB, all cached before measuring (a hit-only load); each round
# measures both servers, alternating which goes first; the best round of each is reported.
set -euo pipefail
secs="${1:-10}"; conns="${2:-64}"; rounds="${3:-3}"
. "$(dirname "$0")/lib.sh"
bin="$cdnlab"
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx)
command -v promtool >/dev/null || need+=(prometheus)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
work="$(mktemp -d)"
chmod 755 "$work"  # nginx workers run unprivileged and need the cache folder
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
origin=127.0.0.1:18080; edge=127.0.0.1:18081; ngx=127.0.0.1:18082
dur=$((secs * rounds * 2 + 120))
"$bin" live origin --listen "$origin" --objects 1000 --min-size 1024 --max-size 1024 --duration "$dur" 2>/dev/null & pids+=($!)
"$bin" live edge --origin "$origin" --listen "$edge" --capacity $((64 << 20)) --duration "$dur" 2>/dev/null & pids+=($!)
# nginx configured like the edge: 2 workers for 2 cores, a 64 MiB cache kept in memory's page
# cache, misses coalesced (proxy_cache_lock), keep-alive to the origin, no access log.
mkdir -p "$work/cache" "$work/logs"
cat > "$work/nginx.conf" <<NGX
worker_processes 2;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream origin { server $origin; keepalive 64; }
  proxy_cache_path $work/cache levels=1:2 keys_zone=edge:16m max_size=64m inactive=1h use_temp_path=off;
  server {
    listen $ngx;
    location /content/ {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache edge;
      proxy_cache_valid 200 1h;
      proxy_cache_lock on;
      add_header Cache-Status "nginx; \$upstream_cache_status";
    }
  }
}
NGX
nginx -c "$work/nginx.conf" -p "$work" -g "daemon off;" & pids+=($!)
sleep 1
for id in $(seq 0 99); do
  curl -s -o /dev/null "http://$edge/content/$id"; curl -s -o /dev/null "http://$ngx/content/$id"
done
hit_edge=$(curl -s -D - -o /dev/null "http://$edge/content/5" | tr -d '\r' | grep -i '^cache-status')
hit_ngx=$(curl -s -D - -o /dev/null "http://$ngx/content/5" | tr -d '\r' | grep -i '^cache-status')
echo "warm: edge says '$hit_edge', nginx says '$hit_ngx'"
cat > "$work/ids.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/content/" .. (n % 100))
end
LUA
run() { # addr -> "req/s p50_ms p99_ms"
  wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$work/ids.lua" "http://$1" 2>/dev/null | awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec/ { rps = $2 }
    /^ +50%/ { p50 = ms($2) } /^ +99%/ { p99 = ms($2) }
    / Non-2xx/ { bad = $NF }
    END { printf "%.0f %.3f %.3f %s\n", rps, p50, p99, (bad == "" ? 0 : bad) }'
}
best() { sort -n -r | head -1; }
: > "$work/edge.txt"; : > "$work/nginx.txt"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then run "$edge" >> "$work/edge.txt"; run "$ngx" >> "$work/nginx.txt"
  else run "$ngx" >> "$work/nginx.txt"; run "$edge" >> "$work/edge.txt"; fi
done
read -r e_rps e_p50 e_p99 e_bad < <(best < "$work/edge.txt")
read -r n_rps n_p50 n_p99 n_bad < <(best < "$work/nginx.txt")
echo "rounds (req/s p50 ms p99 ms non-2xx): cdnlab edge: $(tr '\n' ';' < "$work/edge.txt") nginx: $(tr '\n' ';' < "$work/nginx.txt")"
printf "%-22s %10s %9s %9s %8s\n" server "req/s" "p50 ms" "p99 ms" non-2xx
printf "%-22s %10s %9s %9s %8s\n" "cdnlab edge" "$e_rps" "$e_p50" "$e_p99" "$e_bad"
printf "%-22s %10s %9s %9s %8s\n" "nginx proxy_cache" "$n_rps" "$n_p50" "$n_p99" "$n_bad"
awk -v e="$e_rps" -v n="$n_rps" 'BEGIN { printf "cdnlab edge / nginx requests per second: %.2f (target >= 0.8)\n", e / n }'
curl -s "http://$edge/metrics" > "$work/metrics.txt"
if promtool check metrics < "$work/metrics.txt"; then echo "promtool check metrics: OK ($(grep -c '^[a-z]' "$work/metrics.txt") samples)"; else echo "promtool check metrics: FAILED"; exit 1; fi
