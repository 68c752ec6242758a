/** Evaluates a local model on every shipped environment's held-out split (for model cards and benchmarks). */
import type { TransformerModel } from '../../src/model/transformer.ts';
import type { TextTokenizer } from '../../src/model/tokenizer.ts';
import { listEnvironments } from '../../src/envs/registry.ts';
import { evaluatePolicy, type EvalResult } from '../../src/rollout/evaluate.ts';
import { EnginePolicy, GenerationService } from '../../src/pipeline/generation.ts';

export { formatEvalTable } from '../../src/rollout/evaluate.ts';

export async function evaluateModel(model: TransformerModel, tokenizer: TextTokenizer, options: { items: number; seed: number; envs?: string[]; levels?: number[] }): Promise<EvalResult[]> {
  // Episodes run 16 at a time; their generation requests are sampled as one batch.
  const policy = new EnginePolicy('spindle-base', tokenizer, new GenerationService(() => model, tokenizer, { maxBatch: 16, windowMs: 4 }));
  const envs = listEnvironments().filter((e) => !options.envs || options.envs.includes(e.name));
  const results: EvalResult[] = [];
  for (const env of envs) {
    const levels = options.levels ?? (env.name === 'arith_tool' ? [1, 2, 3] : [1]);
    // A generous tool deadline: 16 episodes building git repositories at once on 2 cores are slow, not wrong.
    const rows = await evaluatePolicy(policy, [env], { items: options.items, seed: options.seed, levels, concurrency: 16, maxSteps: 3, toolTimeoutMs: 15_000 });
    for (const r of rows) console.log(`  ${r.env} L${r.level}: success ${(100 * r.success).toFixed(1)}%`);
    results.push(...rows);
  }
  return results;
}
