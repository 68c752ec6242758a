/**
 * Builds the judges a run config lists (`judge.judges`, src/config/schema.ts). What the config cannot
 * hold comes from the caller: the environment's evaluator, the API keys (looked up by the name in
 * `api_key_env`, from settings in the browser or the environment in the CLI), the model loader and the policy.
 */
import type { JudgeConfig } from '../config/schema.ts';
import { RemoteJudge, type Pricing } from './remote.ts';
import { RuleJudge } from './rule.ts';
import { SelfJudge, type JudgingPolicy } from './self.ts';
import type { Evaluator, Judge } from './types.ts';
import type { JudgeCache } from './cache.ts';

export interface JudgeDeps {
  evaluator?: Evaluator | null;
  /** Returns the secret stored under `name`, or null when it is not set. */
  getSecret?: (name: string) => string | null;
  /** Loads a `type: 'model'` judge from its path (OnnxJudge via judgeAssetsFromUrl / loadOnnxJudgeFromDir). */
  loadModelJudge?: (id: string, path: string) => Promise<Judge>;
  policy?: JudgingPolicy | null;
  cache?: JudgeCache;
  pricing?: Record<string, Pricing>;
}

export async function createJudges(configs: JudgeConfig[], deps: JudgeDeps = {}): Promise<Judge[]> {
  const judges: Judge[] = [];
  for (const c of configs) {
    switch (c.type) {
      case 'rule':
        judges.push(new RuleJudge({ id: c.id, evaluator: deps.evaluator ?? null }));
        break;
      case 'remote': {
        const apiKey = c.api_key_env ? (deps.getSecret?.(c.api_key_env) ?? null) : null;
        if (c.api_key_env && !apiKey) {
          throw new Error(`Judge "${c.id}": no API key found under "${c.api_key_env}". Set it (browser: Settings → API keys; CLI: export ${c.api_key_env}=…) or set api_key_env: null for a server without keys.`);
        }
        judges.push(new RemoteJudge({
          id: c.id, baseUrl: c.base_url, model: c.model, apiKey, temperature: c.temperature, timeoutMs: c.timeout_ms,
          maxConcurrency: c.max_concurrency, maxRetries: c.max_retries, cache: deps.cache, pricing: deps.pricing?.[c.id],
        }));
        break;
      }
      case 'model':
        if (!deps.loadModelJudge) throw new Error(`Judge "${c.id}" is a model judge; pass loadModelJudge (e.g. OnnxJudge from ${c.path}).`);
        judges.push(await deps.loadModelJudge(c.id, c.path));
        break;
      case 'self':
        if (!deps.policy) throw new Error(`Judge "${c.id}" is a self-judge; it needs the policy model (deps.policy).`);
        judges.push(new SelfJudge({ id: c.id, policy: deps.policy }));
        break;
    }
  }
  return judges;
}
