#!/usr/bin/env bash
# Builds the adaptive-bitrate test asset the live players demo and the player tests stream:
# 60 s of ffmpeg's moving test pattern in three VP9 renditions (256x144 at 100 kbit/s, 384x216 at
# 250 kbit/s, 640x360 at 500 kbit/s), 2-second CMAF segments (fragmented MP4), with a DASH MPD
# (manifest.mpd) and HLS playlists (master.m3u8, media_N.m3u8) over the same segments. VP9 is
# royalty-free and decoded by Chromium, Firefox and Safari. Needs Debian's ffmpeg.
#
#   media/make-asset.sh [OUT_DIR]        # default target/media; skipped if already built
#
# The origin serves OUT_DIR (`cdnlab live origin --media OUT_DIR`); cdnlab rewrites the
# playlists with one pathway per edge (docs/live.md).
set -euo pipefail
out="${1:-$(cd "$(dirname "$0")/.." && pwd)/target/media}"
if [ -f "$out/manifest.mpd" ] && [ -f "$out/master.m3u8" ]; then
  exit 0
fi
command -v ffmpeg >/dev/null || { echo "make-asset.sh: ffmpeg is needed (apt-get install ffmpeg)" >&2; exit 1; }
tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
ffmpeg -hide_banner -loglevel error -nostdin \
  -f lavfi -i "testsrc2=size=640x360:rate=25:duration=60" \
  -filter_complex "[0:v]split=3[a][b][c];[a]scale=256:144,setsar=1[v0];[b]scale=384:216,setsar=1[v1];[c]setsar=1[v2]" \
  -map "[v0]" -map "[v1]" -map "[v2]" \
  -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -row-mt 1 -threads 2 \
  -b:v:0 100k -b:v:1 250k -b:v:2 500k \
  -g 50 -keyint_min 50 -pix_fmt yuv420p \
  -f dash -dash_segment_type mp4 -seg_duration 2 -use_template 1 -use_timeline 0 -hls_playlist 1 \
  -init_seg_name 'init-$RepresentationID$.m4s' \
  -media_seg_name 'seg-$RepresentationID$-$Number%03d$.m4s' \
  -adaptation_sets "id=0,streams=v" \
  "$tmp/manifest.mpd"
# Published whole or not at all.
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
