/**
 * Shape checks for imported data. Each returns the first problem as a sentence naming the field,
 * or null when the value is valid. They check what downstream code relies on, not every nicety.
 */
import type { ScoredGroup } from '../contracts.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && !Number.isNaN(v);
const isNumArray = (v: unknown) => Array.isArray(v) && v.every(isNum);
const ROLES = ['system', 'user', 'assistant', 'tool'];
const FINISH = ['answer', 'max_steps', 'max_tokens', 'error'];

export function checkMessages(v: unknown, field = 'messages'): string | null {
  if (!Array.isArray(v)) return `${field} must be a list of {role, content}`;
  for (let i = 0; i < v.length; i++) {
    const m = v[i];
    if (!isObj(m)) return `${field}[${i}] must be an object`;
    if (!ROLES.includes(m.role as string))
      return `${field}[${i}].role must be one of ${ROLES.join(', ')} (got ${JSON.stringify(m.role)})`;
    if (typeof m.content !== 'string') return `${field}[${i}].content must be a string`;
  }
  return null;
}

export function checkToolSchema(v: unknown, field: string): string | null {
  if (!isObj(v) || typeof v.name !== 'string' || !v.name) return `${field}.name must be a non-empty string`;
  if (typeof v.description !== 'string') return `${field}.description must be a string`;
  if (!isObj(v.parameters) || v.parameters.type !== 'object' || !isObj(v.parameters.properties))
    return `${field}.parameters must be a JSON schema {type: "object", properties: {...}}`;
  return null;
}

/** Problems with a value that should be a Trajectory, or null. */
export function checkTrajectory(v: unknown): string | null {
  if (!isObj(v)) return 'a trajectory must be a JSON object';
  for (const f of ['id', 'task_id', 'task_description', 'model_id', 'env', 'group_id'] as const) {
    if (typeof v[f] !== 'string') return `${f} must be a string`;
  }
  if (!v.id) return 'id must not be empty';
  if (v.split !== 'train' && v.split !== 'test')
    return `split must be "train" or "test" (got ${JSON.stringify(v.split)})`;
  for (const f of ['difficulty', 'seed', 'token_count', 'wall_time_seconds', 'created_at'] as const) {
    if (!isNum(v[f])) return `${f} must be a number`;
  }
  if (v.judge_score !== null && !(isNum(v.judge_score) && v.judge_score >= 0 && v.judge_score <= 1))
    return 'judge_score must be a number in [0, 1] or null';
  if (v.success !== null && typeof v.success !== 'boolean') return 'success must be true, false or null';
  if (v.final_response !== null && typeof v.final_response !== 'string')
    return 'final_response must be a string or null';
  if (v.run_id !== null && typeof v.run_id !== 'string') return 'run_id must be a string or null';
  if (!FINISH.includes(v.finish_reason as string)) return `finish_reason must be one of ${FINISH.join(', ')}`;
  if (!Array.isArray(v.steps)) return 'steps must be a list';
  for (let i = 0; i < v.steps.length; i++) {
    const s = v.steps[i];
    if (!isObj(s) || !isNum(s.step_id) || typeof s.observation !== 'string')
      return `steps[${i}] must have a numeric step_id and a string observation`;
    if (s.tool_call !== null && !(isObj(s.tool_call) && typeof s.tool_call.tool_name === 'string'))
      return `steps[${i}].tool_call must be null or have a tool_name`;
  }
  const messages = checkMessages(v.messages);
  if (messages) return messages;
  if (!Array.isArray(v.tools)) return 'tools must be a list';
  for (let i = 0; i < v.tools.length; i++) {
    const p = checkToolSchema(v.tools[i], `tools[${i}]`);
    if (p) return p;
  }
  for (const f of ['tokens', 'assistant_mask', 'logprobs'] as const)
    if (!isNumArray(v[f])) return `${f} must be a list of numbers`;
  const n = (v.tokens as number[]).length;
  if ((v.assistant_mask as number[]).length !== n || (v.logprobs as number[]).length !== n) {
    return `tokens, assistant_mask and logprobs must have the same length (got ${n}, ${(v.assistant_mask as number[]).length}, ${(v.logprobs as number[]).length})`;
  }
  if (
    !Array.isArray(v.turn_spans) ||
    !v.turn_spans.every((s) => Array.isArray(s) && s.length === 2 && isNum(s[0]) && isNum(s[1]))
  )
    return 'turn_spans must be a list of [start, end] pairs';
  if (
    !Array.isArray(v.votes) ||
    !v.votes.every((x) => isObj(x) && typeof x.judge_id === 'string' && (x.score === null || isNum(x.score)))
  )
    return 'votes must be a list of {judge_id, score, …}';
  if (
    !isObj(v.sampling) ||
    !['temperature', 'top_k', 'top_p', 'max_new_tokens'].every((k) => isNum((v.sampling as Obj)[k]))
  )
    return 'sampling must have numeric temperature, top_k, top_p, max_new_tokens';
  return null;
}

const GROUP_FIELDS = [
  'tokens',
  'masks',
  'scores',
  'advantages',
  'ref_logprobs',
  'messages',
  'inference_logprobs',
  'generation_params',
  'overrides',
  'group_overrides',
  'images',
  'env_id',
];

/** Problems with a value that should be an Atropos ScoredDataGroup, or null. */
export function checkScoredGroup(v: unknown): string | null {
  if (!isObj(v)) return 'a scored group must be a JSON object';
  for (const f of ['tokens', 'masks', 'scores']) if (!(f in v)) return `missing required field ${f}`;
  const unknown = Object.keys(v).filter(
    (k) => !GROUP_FIELDS.includes(k) && k !== 'distill_token_ids' && k !== 'distill_logprobs',
  );
  if (unknown.length) return `unknown field ${unknown[0]} (Atropos ScoredDataGroup fields: ${GROUP_FIELDS.join(', ')})`;
  if (!Array.isArray(v.tokens) || !v.tokens.every(isNumArray)) return 'tokens must be a list of lists of token ids';
  const n = v.tokens.length;
  if (!Array.isArray(v.masks) || !v.masks.every(isNumArray) || v.masks.length !== n)
    return `masks must be ${n} lists of ids/-100, one per sequence`;
  if (!isNumArray(v.scores) || (v.scores as number[]).length !== n)
    return `scores must be ${n} numbers, one per sequence`;
  for (let i = 0; i < n; i++) {
    const len = (v.tokens[i] as number[]).length;
    if ((v.masks[i] as number[]).length !== len)
      return `masks[${i}] has ${(v.masks[i] as number[]).length} entries but tokens[${i}] has ${len}`;
  }
  for (const f of ['advantages', 'ref_logprobs', 'inference_logprobs'] as const) {
    const x = v[f];
    if (x === undefined || x === null) continue;
    if (!Array.isArray(x) || x.length !== n || !x.every(isNumArray))
      return `${f} must be null or ${n} lists of numbers`;
  }
  if (v.messages !== undefined && v.messages !== null) {
    if (!Array.isArray(v.messages) || v.messages.length !== n) return `messages must be null or ${n} conversations`;
    for (let i = 0; i < n; i++) {
      const p = checkMessages(v.messages[i], `messages[${i}]`);
      if (p) return p;
    }
  }
  if (v.env_id !== undefined && v.env_id !== null && !Number.isInteger(v.env_id))
    return 'env_id must be an integer or null';
  return null;
}

/** Fills the optional fields Atropos allows to be absent, so every group has all twelve keys. */
export function normalizeScoredGroup(v: Obj): ScoredGroup {
  return {
    tokens: v.tokens as number[][],
    masks: v.masks as number[][],
    scores: v.scores as number[],
    advantages: (v.advantages as number[][] | undefined) ?? null,
    ref_logprobs: (v.ref_logprobs as number[][] | undefined) ?? null,
    messages: (v.messages as ScoredGroup['messages'] | undefined) ?? null,
    inference_logprobs: (v.inference_logprobs as number[][] | undefined) ?? null,
    generation_params: (v.generation_params as Obj | undefined) ?? null,
    overrides: (v.overrides as Obj[] | undefined) ?? null,
    group_overrides: (v.group_overrides as Obj | undefined) ?? null,
    images: null,
    env_id: (v.env_id as number | undefined) ?? null,
  };
}
