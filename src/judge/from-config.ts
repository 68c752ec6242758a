/**
 * Builds the judges a run config lists (`judge.judges`, src/config/schema.ts): the per-trajectory ones
 * (`createJudges`) and the group judges (`createGroupJudges`, which see a whole group at once). What the config cannot
 * hold comes from the caller: the environment's evaluator, the API keys (looked up by the name in
 * `api_key_env`, from settings in the browser or the environment in the CLI), the model loader and the policy.
 */
import type { JudgeConfig } from '../config/schema.ts';
import { endpointOptions, type EndpointConfig } from './chat-client.ts';
import { RemoteGroupJudge, type GroupJudge } from './group-judge.ts';
import { RemoteJudge, type Pricing } from './remote.ts';
import { RubricJudge } from './rubric.ts';
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

/** The API key an endpoint judge names in `api_key_env`, or null for a server without keys; throws, saying how to set it, when it is missing. */
function endpointKey(c: EndpointConfig & { api_key_env: string | null }, deps: JudgeDeps): string | null {
  const apiKey = c.api_key_env ? (deps.getSecret?.(c.api_key_env) ?? null) : null;
  if (c.api_key_env && !apiKey) {
    throw new Error(
      `Judge "${c.id}": no API key found under "${c.api_key_env}". Set it (browser: Settings → API keys; CLI: export ${c.api_key_env}=…) or set api_key_env: null for a server without keys.`,
    );
  }
  return apiKey;
}

/** The per-trajectory judges of `configs`; group judges (`type: 'group'`) are left to `createGroupJudges`. */
export async function createJudges(configs: JudgeConfig[], deps: JudgeDeps = {}): Promise<Judge[]> {
  const judges: Judge[] = [];
  for (const c of configs) {
    switch (c.type) {
      case 'rule':
        judges.push(new RuleJudge({ id: c.id, evaluator: deps.evaluator ?? null }));
        break;
      case 'remote':
        judges.push(
          new RemoteJudge(
            endpointOptions(c, endpointKey(c, deps), { cache: deps.cache, pricing: deps.pricing?.[c.id] }),
          ),
        );
        break;
      case 'rubric':
        judges.push(
          new RubricJudge({
            ...endpointOptions(c, endpointKey(c, deps), { cache: deps.cache, pricing: deps.pricing?.[c.id] }),
            criteria: c.criteria,
            scale: c.scale,
          }),
        );
        break;
      case 'model':
        if (!deps.loadModelJudge)
          throw new Error(`Judge "${c.id}" is a model judge; pass loadModelJudge (e.g. OnnxJudge from ${c.path}).`);
        judges.push(await deps.loadModelJudge(c.id, c.path));
        break;
      case 'self':
        if (!deps.policy) throw new Error(`Judge "${c.id}" is a self-judge; it needs the policy model (deps.policy).`);
        judges.push(new SelfJudge({ id: c.id, policy: deps.policy }));
        break;
      case 'group':
        break;
    }
  }
  return judges;
}

/** The group judges of `configs` (`type: 'group'`), in order. */
export function createGroupJudges(configs: JudgeConfig[], deps: JudgeDeps = {}): GroupJudge[] {
  return configs.flatMap((c) =>
    c.type === 'group'
      ? [
          new RemoteGroupJudge({
            ...endpointOptions(c, endpointKey(c, deps), { cache: deps.cache, pricing: deps.pricing?.[c.id] }),
            rubric: c.rubric || undefined,
          }),
        ]
      : [],
  );
}
