/**
 * Spindle's kernels on one thread and on several must give the same bits (kernels/wasm-simd/kernel-threads.ts):
 * a small model's loss and gradients, a 64-row prompt's prefill (its attention is kernels/wasm-attention.ts's) and
 * a 64-row decoding step (enough rows for its products to be split), without and with LoRA adapters (whose
 * products share phases: kernels/wasm-decode.ts's linears), on the active wasm backend with the
 * kernels on 1 thread and then on `threads`. Run in Node by tests/kernels/kernel-threads.test.ts and in a
 * cross-origin-isolated page's worker, over the threaded build's heap, by selftest.html?threads
 * (tests/e2e/model-backends.e2e.test.ts).
 */
import * as tf from '@tensorflow/tfjs';
import { presetConfig } from '../model/config.ts';
import { attachLora } from '../model/lora.ts';
import { TransformerModel } from '../model/transformer.ts';
import {
  heapKernelsOf,
  kernelThreadSetting,
  setKernelThreads,
  type HeapKernels,
  type TfjsWasmBackend,
} from '../kernels/wasm-simd/heap-kernels.ts';
import { createRng } from '../rng.ts';

export interface ThreadsCheck {
  /** The threads the kernels ran on in the second pass (fewer than asked if workers did not start). */
  threads: number;
  /** What was compared, and what of it differed in any bit. */
  compared: string[];
  differing: string[];
  /** Decoding steps (without and with adapters) the second pass ran as a recorded program the threads shared (kernels/wasm-decode.ts, heap-kernels.ts inPhases). */
  splitSteps: number;
}

const bitsOf = (t: tf.Tensor) => new Uint32Array(new Float32Array(t.dataSync()).buffer);

/** The logits of a 64-row prefill and of the decoding step after it, as raw bits, and how many recorded programs that step ran. */
function prefillAndStep(
  model: TransformerModel,
  kernels: HeapKernels,
): { prefill: Uint32Array; step: Uint32Array; programs: number } {
  const rng = createRng(10);
  const rows = Array.from({ length: 64 }, () =>
    Array.from({ length: 8 }, () => Math.floor(rng.next() * model.config.vocabSize)),
  );
  const prefix = model.forward(rows, { cache: model.emptyCache(), lastOnly: true });
  const programsBefore = kernels.phasedRuns;
  const next = model.forward(
    rows.map((r) => [r[0]]),
    { cache: prefix.cache, lastOnly: true },
  );
  const result = {
    prefill: bitsOf(prefix.logits),
    step: bitsOf(next.logits),
    programs: kernels.phasedRuns - programsBefore,
  };
  tf.dispose([prefix.logits, next.logits, ...prefix.cache!.k, ...prefix.cache!.v, ...next.cache!.k, ...next.cache!.v]);
  return result;
}

/** Every output of one pass, by name, as raw bits, and how many recorded programs the decoding steps ran. */
function pass(
  model: TransformerModel,
  adapted: TransformerModel,
  ids: number[][],
  kernels: HeapKernels,
): { out: Map<string, Uint32Array>; decodePrograms: number } {
  const out = new Map<string, Uint32Array>();
  const vars = model.trainableVariables();
  const { value, grads } = tf.variableGrads(() => tf.mean(tf.square(model.forward(ids).logits)) as tf.Scalar, vars);
  out.set('loss', bitsOf(value));
  for (const v of vars) out.set(`gradient of ${v.name}`, bitsOf(grads[v.name]));
  tf.dispose([value, ...Object.values(grads)]);
  const plain = prefillAndStep(model, kernels);
  out.set('prefill logits, 64 rows', plain.prefill);
  out.set('decoding step logits, 64 rows', plain.step);
  const withLora = prefillAndStep(adapted, kernels);
  out.set('decoding step logits with LoRA adapters, 64 rows', withLora.step);
  return { out, decodePrograms: plain.programs + withLora.programs };
}

/** A small model with LoRA adapters on every projection, their B not zero (a fresh B is, and adds nothing). */
function adaptedModel(): TransformerModel {
  const model = TransformerModel.create(presetConfig('nano', 266), 6);
  attachLora(model, {
    r: 4,
    alpha: 8,
    dropout: 0,
    targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    freezeLayers: null,
    seed: 2,
  });
  const rng = createRng(12);
  for (const layer of model.layers) {
    for (const l of [
      layer.q_proj,
      layer.k_proj,
      layer.v_proj,
      layer.o_proj,
      layer.gate_proj,
      layer.up_proj,
      layer.down_proj,
    ]) {
      tf.tidy(() =>
        l.lora!.B.assign(
          tf.tensor(
            Float32Array.from({ length: l.lora!.B.size }, () => rng.normal() * 0.05),
            l.lora!.B.shape,
          ),
        ),
      );
    }
  }
  return model;
}

export async function compareThreadCounts(threads: number): Promise<ThreadsCheck> {
  const kernels = heapKernelsOf((tf.backend() as unknown as TfjsWasmBackend).wasm);
  const setting = kernelThreadSetting();
  const model = TransformerModel.create(presetConfig('nano', 266), 5);
  const adapted = adaptedModel();
  const rng = createRng(9);
  const ids = Array.from({ length: 4 }, () => Array.from({ length: 48 }, () => Math.floor(rng.next() * 266)));
  try {
    setKernelThreads(1);
    const one = pass(model, adapted, ids, kernels).out;
    setKernelThreads(threads);
    const used = await kernels.threadsReady();
    const many = pass(model, adapted, ids, kernels);
    const differing = [...one]
      .filter(([name, bits]) => !bits.every((b, i) => b === many.out.get(name)![i]))
      .map(([name]) => name);
    return { threads: used, compared: [...one.keys()], differing, splitSteps: many.decodePrograms };
  } finally {
    setKernelThreads(setting);
    model.dispose();
    adapted.dispose();
  }
}
