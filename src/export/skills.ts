/**
 * Skill documents (the skills → instructions → SFT workflow): experience distilled per task TYPE, as Markdown with
 * YAML front matter
 *
 *   ---
 *   name: arith-tool-level-1
 *   description: Arithmetic questions answered by calling the calc tool. (arith_tool, level 1)
 *   usage_count: 37            ← successful uses: episodes of this type that did the task
 *   success_rate: 0.41         ← successes / attempts of this type
 *   created: 2026-12-01T00:00:00.000Z
 *   ---
 *   ## When to use / ## Procedure / ## Examples (```jsonl of successful episodes)
 *
 * A skill aggregates every stored trajectory of one environment and level: its usage counts the
 * successes, its success rate the share of attempts that succeeded, its procedure is the shortest
 * successful episode's tool calls, and its examples are successful episodes verbatim. The instruction
 * rows `skillsToInstructions` makes are those examples in the agent's own format (the rollout's system
 * prompt with its tools, the user's task, `<tool_call>` turns, tool responses, the answer), so SFT on
 * them changes what the agent does at rollout, not only what it says about itself.
 * `mergeJsonl` joins several JSONL datasets into one, deduplicated.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { ChatMessage, ToolSchema, Trajectory } from '../contracts.ts';
import type { SkillRecord } from '../store/records.ts';
import { ImportError } from './import-error.ts';
import { importJsonlRows, textOf } from './jsonl.ts';

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;
/** The examples block of a skill body: successful episodes, one JSON object per line. */
const EXAMPLES = /## Examples\s*```jsonl\n([\s\S]*?)\n```/;

/** Parses a skill document; throws an ImportError naming the file and the missing or wrong field. */
export function parseSkill(markdown: string, file = 'skill.md'): SkillRecord {
  const m = FRONT.exec(markdown);
  if (!m) throw new ImportError(file, 'no YAML front matter: a skill starts with "---", the fields, and "---"');
  let front: Record<string, unknown>;
  try {
    front = (parseYaml(m[1]) ?? {}) as Record<string, unknown>;
  } catch (e) {
    throw new ImportError(file, `front matter is not valid YAML (${(e as Error).message})`);
  }
  if (typeof front.name !== 'string' || !front.name.trim())
    throw new ImportError(file, 'name must be a non-empty string', { field: 'name' });
  if (typeof front.description !== 'string')
    throw new ImportError(file, 'description must be a string', { field: 'description' });
  const usage = front.usage_count ?? 0;
  if (!Number.isInteger(usage) || (usage as number) < 0)
    throw new ImportError(file, 'usage_count must be a whole number ≥ 0', { field: 'usage_count' });
  const rate = front.success_rate ?? 0;
  if (typeof rate !== 'number' || rate < 0 || rate > 1)
    throw new ImportError(file, 'success_rate must be a number in [0, 1]', { field: 'success_rate' });
  const created = front.created instanceof Date ? front.created.toISOString() : String(front.created ?? '');
  return {
    name: front.name.trim(),
    description: front.description,
    usage_count: usage as number,
    success_rate: rate,
    created,
    markdown,
  };
}

/** The body of a skill document (everything after the front matter). */
export function skillBody(skill: SkillRecord): string {
  return FRONT.exec(skill.markdown)?.[2] ?? skill.markdown;
}

/** Renders the document with front matter matching the record's fields (body kept). */
export function renderSkill(skill: SkillRecord, body = skillBody(skill)): string {
  const front = stringifyYaml({
    name: skill.name,
    description: skill.description,
    usage_count: skill.usage_count,
    success_rate: roundRate(skill.success_rate),
    created: skill.created,
  }).trimEnd();
  return `---\n${front}\n---\n${body.startsWith('\n') ? body.slice(1) : body}`;
}

/** Rates are kept to three decimals, in the record as in the document, so the two always agree. */
const roundRate = (rate: number): number => Math.round(rate * 1000) / 1000;

function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 48) || 'skill'
  );
}

/** One worked example of a skill: an episode in the agent's own chat format. */
export interface SkillExample {
  messages: ChatMessage[];
  tools: ToolSchema[];
}

export interface SkillOptions {
  /** Skip task types whose success rate is below this (default 0: keep every type with a success). */
  minSuccessRate?: number;
  /** Successful episodes kept as examples per skill (default 32). */
  maxExamples?: number;
  /** Describes an environment for "When to use" (default: its name). */
  describe?: (env: string) => string;
  now?: Date;
}

/** The task type a trajectory belongs to: its environment and level. */
export function taskType(t: Pick<Trajectory, 'env' | 'difficulty'>): string {
  return `${t.env}/level-${t.difficulty}`;
}

/**
 * Skills from stored trajectories, one per task type with at least one success: usage = successes,
 * success rate = successes / attempts, examples = successful episodes (shortest first).
 */
export function skillsFromTrajectories(trajectories: Iterable<Trajectory>, options: SkillOptions = {}): SkillRecord[] {
  const { minSuccessRate = 0, maxExamples = 32, describe = (env: string) => env, now = new Date() } = options;
  const byType = new Map<string, { attempts: number; wins: Trajectory[] }>();
  for (const t of trajectories) {
    const entry = byType.get(taskType(t)) ?? { attempts: 0, wins: [] };
    entry.attempts++;
    if (t.success === true && t.messages.length > 0) entry.wins.push(t);
    byType.set(taskType(t), entry);
  }
  const skills: SkillRecord[] = [];
  for (const [type, { attempts, wins }] of [...byType].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const rate = wins.length / attempts;
    if (wins.length === 0 || rate < minSuccessRate) continue;
    const examples = [...wins]
      .sort((a, b) => a.token_count - b.token_count || (a.id < b.id ? -1 : 1))
      .slice(0, maxExamples);
    const { env, difficulty } = examples[0];
    const record: SkillRecord = {
      name: slug(type),
      description: `${describe(env)} (${env}, level ${difficulty})`,
      usage_count: wins.length,
      success_rate: roundRate(rate),
      created: now.toISOString(),
      markdown: '',
    };
    skills.push({ ...record, markdown: renderSkill(record, skillDocument(type, examples)) });
  }
  return skills;
}

/** The body: when to use, the procedure of the shortest success, and the examples block. */
function skillDocument(type: string, examples: Trajectory[]): string {
  const shortest = examples[0];
  const steps = shortest.steps
    .filter((s) => s.tool_call)
    .map((s, i) => {
      const call = s.tool_call!;
      const why = s.thought ? ` (${s.thought.trim().replace(/\s+/g, ' ').slice(0, 160)})` : '';
      return `${i + 1}. Call \`${call.tool_name}\` with \`${JSON.stringify(call.parameters)}\`${why}; it returns \`${call.result.slice(0, 120)}\`.`;
    });
  const lines = examples.map((t) => JSON.stringify({ messages: t.messages, tools: t.tools } satisfies SkillExample));
  return [
    `# ${type}`,
    '',
    '## When to use',
    '',
    `Tasks like: ${examples
      .slice(0, 3)
      .map((t) => `"${t.task_description}"`)
      .join(', ')}`,
    '',
    '## Procedure',
    '',
    ...(steps.length ? steps : ['1. Answer directly; no tool is needed.']),
    `${steps.length + 1}. Give the final answer.`,
    '',
    '## Examples',
    '',
    '```jsonl',
    ...lines,
    '```',
    '',
  ].join('\n');
}

/** The worked examples of a skill document (none when it has no examples block). */
export function skillExamples(skill: SkillRecord): SkillExample[] {
  const block = EXAMPLES.exec(skillBody(skill));
  if (!block) return [];
  return importJsonlRows<SkillExample>(block[1], `skill ${skill.name}`, (v) => {
    const row = v as Partial<SkillExample> | null;
    return row && Array.isArray(row.messages) && Array.isArray(row.tools)
      ? null
      : 'each example must have "messages" and "tools" arrays';
  }).map((r) => r.value);
}

export interface InstructionRow extends SkillExample {
  source: string;
}

/**
 * Skills to instructions: the examples of every skill with at least `minUsage` successful uses and a
 * success rate of at least `minSuccessRate` become instruction rows in the agent's own format
 * (`{"messages", "tools", "source": "skill:<name>"}`, the HF chat export's layout).
 */
export function skillsToInstructions(
  skills: SkillRecord[],
  options: { minUsage?: number; minSuccessRate?: number } = {},
): InstructionRow[] {
  const { minUsage = 5, minSuccessRate = 0 } = options;
  return skills
    .filter((s) => s.usage_count >= minUsage && s.success_rate >= minSuccessRate)
    .flatMap((s) => skillExamples(s).map((e) => ({ ...e, source: `skill:${s.name}` })));
}

/**
 * Merges JSONL files into one dataset. Rows are deduplicated by their `messages` (or, without
 * messages, by the whole row); the first occurrence wins. Every file is validated before any output.
 */
export function mergeJsonl(files: { name: string; data: string | Uint8Array | ArrayBuffer }[]): {
  jsonl: string;
  rows: number;
  duplicates: number;
} {
  const parsed = files.map((f) =>
    importJsonlRows<Record<string, unknown>>(textOf(f.data), f.name, (v) =>
      typeof v === 'object' && v !== null && !Array.isArray(v) ? null : 'each line must be a JSON object',
    ),
  );
  const seen = new Set<string>();
  let out = '';
  let rows = 0,
    duplicates = 0;
  for (const file of parsed) {
    for (const { value: row } of file) {
      const key = JSON.stringify(row.messages ?? row);
      if (seen.has(key)) {
        duplicates++;
        continue;
      }
      seen.add(key);
      out += JSON.stringify(row) + '\n';
      rows++;
    }
  }
  return { jsonl: out, rows, duplicates };
}
