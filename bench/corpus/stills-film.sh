#!/usr/bin/env bash
# A bench film unlike bench:attacks' own (a pan over one synthetic still with a patch moving on it):
# photographs panned and zoomed with nothing else moving, hard cuts between scenes that fall inside
# segments (scenes of 7 to 13 s), one dark scene, and titles burned into the picture, with music.
# Leaks come from footage drm has never seen, so a choice that only works on one film must show here.
# Usage: bench/corpus/stills-film.sh OUTDIR [WIDTHxHEIGHT]   (default 640x360; needs apt-get download
# access and an ffmpeg; FFMPEG=path to choose one). Writes stills-WxH-90s.mp4 and CREDITS-stills.txt.
set -euo pipefail
. "$(dirname "$0")/debian-packages.sh"
out=${1:?usage: stills-film.sh OUTDIR [WIDTHxHEIGHT]}
size=${2:-640x360}
w=${size%x*}
h=${size#*x}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ff=${FFMPEG:-$(command -v ffmpeg || true)}
[ -n "$ff" ] || { echo "stills-film.sh: no ffmpeg (set FFMPEG)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unpack_debs "$work" plasma-workspace-wallpapers hyperrogue-music fonts-dejavu-core
wp="$work/x/usr/share/wallpapers"
font="$work/x/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
# photograph, seconds, motion (zoom in, zoom out, pan left, pan right), brightness, title
scenes=(
  "Kite 11 in 0 Chapter one"
  "Grey 7 right 0 -"
  "DarkestHour 13 out -0.28 Night"
  "FallenLeaf 9 left 0 -"
  "ColorfulCups 12 in 0 A title over the picture"
  "Path 8 right 0 -"
  "summer_1am 10 out -0.12 -"
  "PastelHills 13 left 0 The end"
  "EveningGlow 7 in 0 -"
)
motion() { # kind frames
  case $1 in
    in) echo "z='1+0.3*on/$2':x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)'" ;;
    out) echo "z='1.3-0.3*on/$2':x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)'" ;;
    left) echo "z=1.25:x='(iw-iw/zoom)*(1-on/$2)':y='(ih-ih/zoom)/2'" ;;
    right) echo "z=1.25:x='(iw-iw/zoom)*on/$2':y='(ih-ih/zoom)/2'" ;;
  esac
}
list="$work/list.txt"
: > "$list"
i=0
for scene in "${scenes[@]}"; do
  read -r photo seconds kind dark title <<< "$scene"
  img=$(ls "$wp/$photo/contents/images/"2560x1*.jpg | head -1)
  frames=$(( seconds * 25 ))
  vf="scale=2560:1440:force_original_aspect_ratio=increase,crop=2560:1440,zoompan=$(motion "$kind" "$frames"):d=$frames:s=${w}x${h}:fps=25"
  [ "$dark" != 0 ] && vf="$vf,eq=brightness=$dark:contrast=0.8"
  if [ "$title" != - ]; then
    text=${title//_/ }
    vf="$vf,drawtext=fontfile=$font:text='$text':fontcolor=white:fontsize=h/12:x=(w-text_w)/2:y=h*0.8:borderw=2"
  fi
  "$ff" -v error -y -loop 1 -framerate 25 -i "$img" -t "$seconds" -vf "$vf,format=yuv420p" \
    -c:v libx264 -preset veryfast -crf 14 "$work/scene-$i.mp4"
  echo "file '$work/scene-$i.mp4'" >> "$list"
  i=$(( i + 1 ))
done
music="$work/x/usr/share/hyperrogue/music/hr3-jungle.ogg"
# the track is 78 s: it plays on from its start
"$ff" -v error -y -f concat -safe 0 -i "$list" -stream_loop -1 -i "$music" -map 0:v -map 1:a -t 90 \
  -c:v libx264 -preset veryfast -crf 16 -c:a aac -b:a 192k "$out/stills-${w}x${h}-90s.mp4"
cat > "$out/CREDITS-stills.txt" <<TXT
Photographs: Debian package plasma-workspace-wallpapers, LGPL-3.
Music: "hr3-jungle" from Debian package hyperrogue-music, CC-BY-SA-3.0.
Titles: DejaVu Sans Bold from Debian package fonts-dejavu-core.
TXT
ls -l "$out/stills-${w}x${h}-90s.mp4"
