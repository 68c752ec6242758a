#!/usr/bin/env bash
# Packs what bench/webgpu.bench.ts needs on a GPU machine that has no Node, no npm registry and maybe no
# Vulkan loader (the device tool's H200: see /work/.library/device/README.md) into .device/ (ignored
# by git, under the tool's 64 MiB): this machine's node binary, the benchmark bundled into one file,
# dawn.node, tfjs-wasm's binaries and Chromium's Vulkan loader, compressed. Run it here, then on the
# device machine, carrying .device:  bash scripts/device/run-webgpu-bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.device
rm -rf "$out" && mkdir -p "$out/node_modules/webgpu/dist/linux-x64"

# One ESM file; tfjs-wasm's loader finds its .wasm files beside __dirname, so the bundle defines it.
npx esbuild bench/webgpu.bench.ts --bundle --platform=node --format=esm --target=node20 \
  --external:webgpu --log-level=warning --outfile="$out/webgpu-bench.mjs" \
  --banner:js="import { createRequire as __cr } from 'node:module'; import { fileURLToPath as __fu } from 'node:url'; import { dirname as __dn } from 'node:path'; const require = __cr(import.meta.url); const __filename = __fu(import.meta.url); const __dirname = __dn(__filename);"
cp node_modules/@tensorflow/tfjs-backend-wasm/dist/*.wasm "$out/"
cp node_modules/webgpu/index.js node_modules/webgpu/package.json "$out/node_modules/webgpu/"
xz -T0 -6 -c node_modules/webgpu/dist/linux-x64/dawn.node > "$out/dawn.node.xz"
xz -T0 -6 -c "$(readlink -f "$(command -v node)")" > "$out/node.xz"
if [ -f /usr/lib/chromium/libvulkan.so.1 ]; then cp /usr/lib/chromium/libvulkan.so.1 "$out/"; fi
du -sh "$out"
