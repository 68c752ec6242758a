/**
 * The same tiny seeded model run on the cpu backend (the reference) and on WebGPU or wasm (Spindle's
 * own kernels on each), comparing logits, loss, every gradient (full and LoRA) and greedy generation:
 * in the browser by the self-test page (selftest.ts), in Node by tests/kernels/webgpu-kernels.test.ts.
 * When WebGPU is unavailable the result says so instead of failing.
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend, probeEnvironment, type InitOptions } from '../kernels/backend.ts';
import type { ModelConfig } from '../model/config.ts';
import { attachLora } from '../model/lora.ts';
import { crossEntropyLoss } from '../model/logprobs.ts';
import { createRng } from '../rng.ts';
import { generate } from '../model/sampling.ts';
import { TransformerModel } from '../model/transformer.ts';

const CONFIG: ModelConfig = {
  vocabSize: 40,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 4,
  maxPositions: 32,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  attentionBias: true,
  family: 'qwen2',
};
const TOKENS = [
  [1, 5, 9, 2, 7, 3],
  [6, 6, 1, 0, 2, 9],
];

interface BackendRun {
  backend: string;
  logits: number[];
  loss: number;
  grads: number[][];
  loraLoss: number;
  loraGrads: number[][];
  tokens: number[][];
  ms: number;
}

export interface SelftestResult {
  status: 'running' | 'done' | 'unavailable' | 'error';
  reason?: string;
  adapter?: string;
  maxDiff?: { logits: number; loss: number; grads: number; loraLoss: number; loraGrads: number };
  tokensEqual?: boolean;
  runs?: BackendRun[];
}

// Reads are async: tfjs-webgpu's synchronous read path breaks later async reads in Chromium.
async function gradients(model: TransformerModel, vars: tf.Variable[]): Promise<{ loss: number; grads: number[][] }> {
  const { value, grads } = tf.variableGrads(() => crossEntropyLoss(model, TOKENS), vars);
  const out = {
    loss: (await value.data())[0],
    grads: await Promise.all(vars.map(async (v) => Array.from(await grads[v.name].data()))),
  };
  value.dispose();
  tf.dispose(grads);
  return out;
}

let stage = 'start';

async function runOn(backend: 'cpu' | ComparedBackend, init: Omit<InitOptions, 'forced'>): Promise<BackendRun> {
  stage = `${backend}: init`;
  const choice = await initBackend({ ...init, forced: backend });
  const start = performance.now();
  const model = TransformerModel.create(CONFIG, 5);
  stage = `${backend}: forward`;
  const logitsTensor = tf.tidy(() => model.forward(TOKENS).logits);
  const logits = Array.from(await logitsTensor.data());
  logitsTensor.dispose();
  stage = `${backend}: backward`;
  const full = await gradients(model, model.trainableVariables());
  stage = `${backend}: LoRA backward`;
  attachLora(model, { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'v_proj', 'down_proj'], seed: 3 });
  const rng = createRng(8);
  for (const v of model.trainableVariables())
    v.assign(
      tf.tensor(
        Float32Array.from({ length: v.size }, () => rng.normal() * 0.3),
        v.shape,
      ),
    );
  const lora = await gradients(model, model.trainableVariables());
  stage = `${backend}: generate`;
  const gen = await generate(model, [[1, 2, 3], [4]], { maxNewTokens: 6, temperature: 0, seed: 1 });
  model.dispose();
  const threads = choice.threadsCount ? ` (${choice.threadsCount} thread${choice.threadsCount > 1 ? 's' : ''})` : '';
  return {
    backend: backend + threads,
    logits,
    loss: full.loss,
    grads: full.grads,
    loraLoss: lora.loss,
    loraGrads: lora.grads,
    tokens: gen.tokens,
    ms: performance.now() - start,
  };
}

function maxDiff(a: number[], b: number[]): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return a.length === b.length ? worst : Infinity;
}

export type ComparedBackend = 'webgpu' | 'wasm';

/** Largest differences from cpu the comparison accepts (float32 reductions in another order). */
const COMPARISON_TOLERANCE = { logits: 1e-3, loss: 1e-4, grads: 1e-3, loraLoss: 1e-4, loraGrads: 1e-3 } as const;

/** What a finished comparison got wrong, one line per problem; empty when the backend agrees with cpu. */
export function comparisonProblems(result: SelftestResult): string[] {
  if (result.status !== 'done') return [`status ${result.status}: ${result.reason ?? ''}`];
  const problems = Object.entries(COMPARISON_TOLERANCE)
    .filter(([what, limit]) => !(result.maxDiff![what as keyof typeof COMPARISON_TOLERANCE] < limit))
    .map(
      ([what, limit]) =>
        `${what} differs by ${result.maxDiff![what as keyof typeof COMPARISON_TOLERANCE]} (limit ${limit})`,
    );
  if (!result.tokensEqual) problems.push('greedy tokens differ');
  return problems;
}

/**
 * Runs the model on cpu and on `backend` (WebGPU when an adapter exists; wasm, given its binaries'
 * `wasmPaths` in a browser) and compares every output.
 */
export async function compareWithCpu(
  backend: ComparedBackend,
  init: Omit<InitOptions, 'forced'> = {},
): Promise<SelftestResult> {
  const probe = await probeEnvironment();
  if (backend === 'webgpu' && !probe.adapter)
    return {
      status: 'unavailable',
      reason: probe.hasWebGPU ? 'WebGPU returned no adapter' : 'navigator.gpu is missing',
    };
  const adapterName = probe.adapter ? `${probe.adapter.vendor} ${probe.adapter.architecture}` : undefined;
  const cpu = await runOn('cpu', {});
  let other: BackendRun;
  try {
    other = await runOn(backend, init);
  } catch (err) {
    return {
      status: 'error',
      adapter: adapterName,
      reason: `${backend} run failed at ${stage}: ${(err as Error).message}`,
      runs: [cpu],
    };
  }
  const flat = (g: number[][]) => g.flat();
  return {
    status: 'done',
    adapter: adapterName,
    maxDiff: {
      logits: maxDiff(other.logits, cpu.logits),
      loss: Math.abs(other.loss - cpu.loss),
      grads: maxDiff(flat(other.grads), flat(cpu.grads)),
      loraLoss: Math.abs(other.loraLoss - cpu.loraLoss),
      loraGrads: maxDiff(flat(other.loraGrads), flat(cpu.loraGrads)),
    },
    tokensEqual: JSON.stringify(other.tokens) === JSON.stringify(cpu.tokens),
    runs: [cpu, other],
  };
}
