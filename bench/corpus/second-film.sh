#!/usr/bin/env bash
# A second film for the ingest benchmarks, unlike the corpus's (./make-corpus.sh), so that
# a figure is not tuned to one clip: other photographs from the same Debian package, another motion (a
# sideways pan that zooms out, each shot fading in from and out to black) and another track of the same
# music package. Usage: bench/corpus/second-film.sh OUTDIR   (needs apt-get download access and an
# ffmpeg; FFMPEG=path to choose one). Writes pan-1080p-60s.mp4, pan-1080p-30s.mp4 and CREDITS-pan.txt.
set -euo pipefail
. "$(dirname "$0")/debian-packages.sh"
out=${1:?usage: second-film.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ff=${FFMPEG:-$(command -v ffmpeg || true)}
[ -n "$ff" ] || { echo "second-film.sh: no ffmpeg (set FFMPEG)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unpack_debs "$work" plasma-workspace-wallpapers hyperrogue-music
wp="$work/x/usr/share/wallpapers"
photos=(ColorfulCups FallenLeaf Path summer_1am Grey PastelHills)

# 10 s per photograph: from 1.3x zoomed in at the left edge to the whole picture, drifting right and
# down, with half a second of fade at each end (a cut through black between shots).
clip() { # photo file
  local img
  img=$(ls "$wp/$1/contents/images/"2560x1*.jpg | head -1)
  local pan="zoompan=z='1.3-0.001*on':x='(iw-iw/zoom)*on/300':y='(ih-ih/zoom)*(0.2+on/600)'"
  local fades="fade=in:st=0:d=0.5,fade=out:st=9.5:d=0.5"
  "$ff" -v error -y -loop 1 -framerate 30 -i "$img" -t 10 \
    -vf "scale=3840:2400,$pan:d=300:s=1920x1080:fps=30,$fades,format=yuv420p" \
    -c:v libx264 -preset veryfast -crf 16 "$2"
}
list="$work/list.txt"
: > "$list"
for i in "${!photos[@]}"; do
  clip "${photos[$i]}" "$work/pan-$i.mp4"
  echo "file '$work/pan-$i.mp4'" >> "$list"
done
music="$work/x/usr/share/hyperrogue/music/hr3-jungle.ogg"
for seconds in 60 30; do
  "$ff" -v error -y -f concat -safe 0 -i "$list" -i "$music" -map 0:v -map 1:a -t "$seconds" \
    -c:v libx264 -preset veryfast -crf 18 -g 60 -c:a aac -b:a 192k -shortest "$out/pan-1080p-${seconds}s.mp4"
done
cat > "$out/CREDITS-pan.txt" <<TXT
Photographs: Debian package plasma-workspace-wallpapers (${photos[*]}), LGPL-3.
Music: "hr3-jungle" from Debian package hyperrogue-music, CC-BY-SA-3.0.
TXT
ls -l "$out"/pan-1080p-*.mp4
