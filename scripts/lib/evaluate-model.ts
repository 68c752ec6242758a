/** Evaluates a local model on every shipped environment's held-out split (for model cards and benchmarks). */
import type { TransformerModel } from '../../src/model/transformer.ts';
import type { TextTokenizer } from '../../src/rollout/policy.ts';
import { LocalPolicy } from '../../src/rollout/local-policy.ts';
import { listEnvironments } from '../../src/envs/registry.ts';
import { evaluatePolicy, type EvalResult } from '../../src/rollout/evaluate.ts';

export { formatEvalTable } from '../../src/rollout/evaluate.ts';

export async function evaluateModel(model: TransformerModel, tokenizer: TextTokenizer, options: { items: number; seed: number; envs?: string[]; levels?: number[] }): Promise<EvalResult[]> {
  const policy = new LocalPolicy(model, tokenizer, { id: 'spindle-base' });
  const envs = listEnvironments().filter((e) => !options.envs || options.envs.includes(e.name));
  const results: EvalResult[] = [];
  for (const env of envs) {
    const levels = options.levels ?? (env.name === 'arith_tool' ? [1, 2, 3] : [1]);
    const rows = await evaluatePolicy(policy, [env], { items: options.items, seed: options.seed, levels });
    for (const r of rows) console.log(`  ${r.env} L${r.level}: success ${(100 * r.success).toFixed(1)}%`);
    results.push(...rows);
  }
  return results;
}
