#!/usr/bin/env bash
# On the GPU machine, after pack-webgpu-bench.sh here and with .device carried: unpacks node and
# dawn.node, points Dawn at the NVIDIA Vulkan driver (the loader from .device when the machine has
# none), and runs the benchmark; the JSON lands in $OUT (or bench/results/). Also BENCH_SMOKE=1 here.
set -euo pipefail
cd "$(dirname "$0")/../.."
d=.device
[ -x /tmp/spindle-node ] || xz -dc "$d/node.xz" > /tmp/spindle-node && chmod +x /tmp/spindle-node
[ -f "$d/node_modules/webgpu/dist/linux-x64/dawn.node" ] || xz -dc "$d/dawn.node.xz" > "$d/node_modules/webgpu/dist/linux-x64/dawn.node"
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"; fi
if ! ldconfig -p | grep -q libvulkan.so.1 && [ -f "$d/libvulkan.so.1" ]; then export SPINDLE_VULKAN_LOADER="$PWD/$d/libvulkan.so.1"; fi
export SPINDLE_PYTHON="${SPINDLE_PYTHON:-python3}" BENCH_OUT="${BENCH_OUT:-${OUT:+$OUT/webgpu.json}}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
cd "$d" && exec /tmp/spindle-node webgpu-bench.mjs
