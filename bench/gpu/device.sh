#!/usr/bin/env bash
# Runs bench:gpu on a machine with an NVIDIA GPU from the payload `npm run bench:gpu:pack` made: no Node,
# npm or network needed there, only the NVIDIA driver (and xz or python3 to unpack). Arguments go to
# the benchmark; the JSON report is written to $OUT (or the payload) as bench-gpu.json, with the GPU's
# utilization and PCIe traffic sampled beside it (gpu-dmon.txt), and the kernels' registers as
# compiled for the card (ptxas.txt, where the toolkit is there).
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
out=${OUT:-$payload}
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max --format=csv,noheader || true
# The link and the clocks bound what the host side can move and what the kernels can do.
link=pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.max.sm
nvidia-smi --query-gpu=compute_cap,$link --format=csv || true
# The registers and spills of every kernel as the driver's JIT compiles them for this card, where the
# machine has the toolkit's ptxas (the driver compiles alike without it).
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .' || true)
if command -v ptxas >/dev/null && [ -n "$cap" ]; then
  for ptx in "$payload"/ptx/*.ptx; do ptxas -arch="sm_$cap" -v "$ptx" -o /dev/null 2>&1 || true; done >"$out/ptxas.txt"
fi
# The GPU's own view while the benchmark runs, a sample a second beside the report: how busy its SMs
# and memory were, and PCIe MB/s each way, to line up with the parts (the benchmark's log lines
# carry the time).
if command -v nvidia-smi >/dev/null; then
  nvidia-smi dmon -s ut -o DT -d 1 >"$out/gpu-dmon.txt" 2>/dev/null &
  sampler=$!
  trap 'kill "$sampler" 2>/dev/null || true' EXIT
fi
# ffprobe is not used by the benchmark; its variable only keeps the bundle from looking for it
export DRM_FFMPEG="$bin/ffmpeg" DRM_FFPROBE="$bin/ffmpeg"
"$bin/node" "$payload/bench-gpu.js" --out "$out/bench-gpu.json" "$@"
