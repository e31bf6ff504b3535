#!/usr/bin/env bash
# Runs bench:gpu on a machine with an NVIDIA GPU from the payload `npm run bench:gpu:pack` made: no Node,
# npm or network needed there, only the NVIDIA driver (and xz or python3 to unpack). Arguments go to
# the benchmark; the JSON report is written to $OUT (or the payload) as bench-gpu.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
payload=${PAYLOAD:-$root/.gpu-payload}
bin=$(mktemp -d)
unxz() {
  if command -v xz >/dev/null; then xz -dc "$1" >"$2"
  else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"
  fi
  chmod +x "$2"
}
unxz "$payload/node.xz" "$bin/node"
unxz "$payload/ffmpeg.xz" "$bin/ffmpeg"
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max --format=csv,noheader || true
# ffprobe is not used by the benchmark; its variable only keeps the bundle from looking for it
export DRM_FFMPEG="$bin/ffmpeg" DRM_FFPROBE="$bin/ffmpeg"
"$bin/node" "$payload/bench-gpu.js" --out "${OUT:-$payload}/bench-gpu.json" "$@"
