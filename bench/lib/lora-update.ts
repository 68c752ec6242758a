/**
 * The LoRA GRPO update the 135M and memory benchmarks measure: r 8 on q/v, AdamW, and `count`
 * synthetic sequences of `seq` tokens whose last tokens carry alternating ± advantages.
 */
import { attachLora } from '../../src/model/lora.ts';
import type { TransformerModel } from '../../src/model/transformer.ts';
import { Optimizer } from '../../src/train/optimizer.ts';
import { grpoUpdate } from '../../src/train/update.ts';

export const BENCH_LORA = 'r 8 on q_proj, v_proj';

/** Attaches the adapters; returns the update to run (micro-batches of count / accumSteps sequences) and a dispose. */
export function loraUpdate(
  model: TransformerModel,
  count: number,
  seq: number,
  accumSteps: number,
): { run: () => Promise<unknown>; dispose: () => void } {
  attachLora(model, { r: 8, alpha: 16, dropout: 0, targetModules: ['q_proj', 'v_proj'] });
  const optimizer = new Optimizer(model.trainableVariables(), {
    kind: 'adamw',
    learningRate: 5e-4,
    warmupSteps: 0,
    weightDecay: 0,
    gradClip: 1,
  });
  const samples = Array.from({ length: count }, (_, s) => {
    const tokens = Array.from({ length: seq }, (_, t) => (s * 31 + t * 7) % 256);
    const mask = tokens.map((_, t) => (t >= Math.min(16, seq / 4) ? 1 : 0));
    return { tokens, mask, oldLogp: tokens.map(() => -1), advantages: mask.map((m) => m * (s % 2 ? 1 : -1)) };
  });
  return {
    run: () =>
      grpoUpdate(
        model,
        optimizer,
        samples,
        { accumSteps, padId: 0, temperature: 1, dropoutSeed: 1 },
        { clipEpsilon: 0.2, clipEpsilonHigh: null, klBeta: 0, useReference: false },
      ),
    dispose: () => optimizer.dispose(),
  };
}
