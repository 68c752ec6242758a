/**
 * TOKEN_STATS_KERNEL and its gradient on tfjs-wasm (fused.ts has the contract): per position, the
 * log-prob of the next token, the entropy and the log-normaliser of softmax(logits/τ), read straight
 * from the logits with one row loop, instead of tfjs's chain of slice, log-softmax, one-hot, products and
 * sums, each a pass over [B, T, V] and a tensor of its own. Positions marked inactive (prompt and tool
 * tokens, padding: about 60% of a GRPO update's) are skipped: they read 0 and get no gradient, which is
 * what the losses make of them anyway (every term is multiplied by the same mask).
 *
 * Each row is computed on its own, in float64 in JS, so a row's values never depend on the batch it
 * came in. With s = logits/τ, m = max s, Z = Σ e^(s−m), L = m + ln Z and l = s − L:
 *   log p(target) = s_target − L,   H = ln Z − Σ e^(s−m)·(s−m) / Z,
 *   ∂/∂s_k = dlogp·(onehot_k − p_k) − dH·p_k·(l_k + H),   ∂/∂logits = ∂/∂s / τ.
 */
import * as tf from '@tensorflow/tfjs';
import { TOKEN_STATS_DX_KERNEL, TOKEN_STATS_KERNEL } from './fused.ts';
import type { TfjsWasmBackend } from './wasm-simd/heap-kernels.ts';

interface HeapViews {
  typedArrayFromHeap(t: tf.TensorInfo): Float32Array | Int32Array;
}

/** Sizes of logits [B, T, V] whose last position has no target: W = T − 1 rows of stats per sequence. */
function sizesOf(logits: tf.TensorInfo): { B: number; T: number; V: number; W: number } {
  const [B, T, V] = logits.shape;
  return { B, T, V, W: T - 1 };
}

/** Calls `visit(row, base)` for each active position: `row` indexes the [B, T−1] stats, `base` the position's logits. */
function eachActiveRow(logits: tf.TensorInfo, on: ArrayLike<number>, visit: (row: number, base: number) => void): void {
  const { B, T, V, W } = sizesOf(logits);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < W; t++) if (on[b * W + t]) visit(b * W + t, (b * T + t) * V);
  }
}

export function registerWasmTokenStats(): void {
  if (tf.getKernel(TOKEN_STATS_KERNEL, 'wasm')) return;
  tf.registerKernel({
    kernelName: TOKEN_STATS_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const { logits, targets, active } = inputs as Record<string, tf.TensorInfo>;
      const { B, V, W } = sizesOf(logits);
      const heap = backend as unknown as TfjsWasmBackend & HeapViews;
      const output = heap.makeOutput([3, B, W], 'float32');
      // Views after the output is made: making it can grow the heap, which detaches older views.
      const z = heap.typedArrayFromHeap(logits);
      const target = heap.typedArrayFromHeap(targets);
      const on = heap.typedArrayFromHeap(active);
      const out = heap.typedArrayFromHeap(output as tf.TensorInfo) as Float32Array;
      const inv = 1 / (attrs as { temperature: number }).temperature;
      out.fill(0);
      eachActiveRow(logits, on, (row, base) => {
        let m = -Infinity;
        for (let k = 0; k < V; k++) m = Math.max(m, z[base + k] * inv);
        let sum = 0;
        let weighted = 0;
        for (let k = 0; k < V; k++) {
          const d = z[base + k] * inv - m;
          const e = Math.exp(d);
          sum += e;
          weighted += e * d;
        }
        const lnZ = Math.log(sum);
        out[row] = z[base + target[row]] * inv - m - lnZ;
        out[B * W + row] = lnZ - weighted / sum;
        out[2 * B * W + row] = m + lnZ;
      });
      return output;
    },
  });
  tf.registerKernel({
    kernelName: TOKEN_STATS_DX_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const { dy, logits, targets, active, stats } = inputs as Record<string, tf.TensorInfo>;
      const { B, T, V, W } = sizesOf(logits);
      const heap = backend as unknown as TfjsWasmBackend & HeapViews;
      const output = heap.makeOutput([B, T, V], 'float32');
      const z = heap.typedArrayFromHeap(logits);
      const target = heap.typedArrayFromHeap(targets);
      const on = heap.typedArrayFromHeap(active);
      const s = heap.typedArrayFromHeap(stats);
      const d = heap.typedArrayFromHeap(dy);
      const out = heap.typedArrayFromHeap(output as tf.TensorInfo) as Float32Array;
      const inv = 1 / (attrs as { temperature: number }).temperature;
      out.fill(0); // inactive positions and each sequence's last one
      eachActiveRow(logits, on, (row, base) => {
        const [dLogp, dH] = [d[row], d[B * W + row]];
        const [H, L] = [s[B * W + row], s[2 * B * W + row]];
        for (let k = 0; k < V; k++) {
          const l = z[base + k] * inv - L;
          out[base + k] = -Math.exp(l) * (dLogp + dH * (l + H)) * inv;
        }
        out[base + target[row]] += dLogp * inv;
      });
      return output;
    },
  });
}
