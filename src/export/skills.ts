/**
 * Skill documents (the seed's fourth workflow): Markdown with YAML front matter
 *
 *   ---
 *   name: add-with-calculator
 *   description: Add two numbers with the calculator tool
 *   usage_count: 7
 *   success_rate: 0.86
 *   created: 2025-01-01T00:00:00.000Z
 *   ---
 *   # Add with calculator
 *   ## When to use
 *   …
 *   ## Procedure
 *   1. Call `calculator` with {"expression": "2+3"}.
 *
 * A skill is made from a successful trajectory (its steps become the procedure). `skillsToInstructions`
 * turns well-used skills into instruction-tuning rows in chat form (`{"messages": [...]}`, the same
 * format as the HF chat export), and `mergeJsonl` joins several JSONL datasets into one, deduplicated.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { ChatMessage, Trajectory } from '../contracts.ts';
import type { SkillRecord } from '../store/records.ts';
import { ImportError } from './import-error.ts';
import { parseJsonl, textOf } from './jsonl.ts';

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

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
  if (typeof front.name !== 'string' || !front.name.trim()) throw new ImportError(file, 'name must be a non-empty string', { field: 'name' });
  if (typeof front.description !== 'string') throw new ImportError(file, 'description must be a string', { field: 'description' });
  const usage = front.usage_count ?? 0;
  if (!Number.isInteger(usage) || (usage as number) < 0) throw new ImportError(file, 'usage_count must be a whole number ≥ 0', { field: 'usage_count' });
  const rate = front.success_rate ?? 0;
  if (typeof rate !== 'number' || rate < 0 || rate > 1) throw new ImportError(file, 'success_rate must be a number in [0, 1]', { field: 'success_rate' });
  const created = front.created instanceof Date ? front.created.toISOString() : String(front.created ?? '');
  return { name: front.name.trim(), description: front.description, usage_count: usage as number, success_rate: rate, created, markdown };
}

/** The body of a skill document (everything after the front matter). */
export function skillBody(skill: SkillRecord): string {
  return FRONT.exec(skill.markdown)?.[2] ?? skill.markdown;
}

/** Renders the document with front matter matching the record's fields (body kept). */
export function renderSkill(skill: SkillRecord, body = skillBody(skill)): string {
  const front = stringifyYaml({
    name: skill.name, description: skill.description, usage_count: skill.usage_count,
    success_rate: Math.round(skill.success_rate * 1000) / 1000, created: skill.created,
  }).trimEnd();
  return `---\n${front}\n---\n${body.startsWith('\n') ? body.slice(1) : body}`;
}

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 48) || 'skill';
}

/**
 * A skill from a successful trajectory: the task as "when to use", each tool call as a numbered
 * step (with the thought that led to it), and the final answer as the outcome.
 */
export function skillFromTrajectory(t: Trajectory, options: { name?: string; description?: string; now?: Date } = {}): SkillRecord {
  if (t.success !== true) throw new Error(`trajectory ${t.id} did not succeed (success = ${t.success}): only successful episodes become skills`);
  const name = options.name ?? slug(`${t.env}-${t.task_description}`);
  const description = options.description ?? `How to solve "${t.task_description.slice(0, 80)}" in ${t.env}`;
  const steps = t.steps.filter((s) => s.tool_call).map((s, i) => {
    const call = s.tool_call!;
    const why = s.thought ? ` (${s.thought.trim().replace(/\s+/g, ' ').slice(0, 160)})` : '';
    return `${i + 1}. Call \`${call.tool_name}\` with \`${JSON.stringify(call.parameters)}\`${why}; it returns \`${call.result.slice(0, 120)}\`.`;
  });
  const body = [
    `# ${name}`, '', '## When to use', '', t.task_description, '', '## Procedure', '',
    ...(steps.length ? steps : ['1. Answer directly; no tool is needed.']),
    `${steps.length + 1}. Give the final answer.`, '', '## Example outcome', '', t.final_response ?? '', '',
    `Source: trajectory ${t.id} (${t.env}, score ${t.judge_score ?? 'unscored'}).`, '',
  ].join('\n');
  const skill: SkillRecord = { name, description, usage_count: 0, success_rate: 1, created: (options.now ?? new Date()).toISOString(), markdown: '' };
  return { ...skill, markdown: renderSkill(skill, body) };
}

export interface InstructionRow { messages: ChatMessage[]; source: string }

/**
 * skill_to_instruction: each skill used at least `minUsage` times becomes one instruction row,
 * `{"messages": [system?, user: task/description, assistant: the procedure], "source": "skill:<name>"}`.
 */
export function skillsToInstructions(skills: SkillRecord[], options: { minUsage?: number; system?: string } = {}): InstructionRow[] {
  const { minUsage = 5, system } = options;
  return skills.filter((s) => s.usage_count >= minUsage).map((s) => ({
    messages: [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      { role: 'user' as const, content: `${s.description}. Describe the procedure.` },
      { role: 'assistant' as const, content: skillBody(s).trim() },
    ],
    source: `skill:${s.name}`,
  }));
}

/**
 * Merges JSONL files into one dataset. Rows are deduplicated by their `messages` (or, without
 * messages, by the whole row); the first occurrence wins. Every file is validated before any output.
 */
export function mergeJsonl(files: { name: string; data: string | Uint8Array | ArrayBuffer }[]): { jsonl: string; rows: number; duplicates: number } {
  const parsed = files.map((f) => parseJsonl<Record<string, unknown>>(textOf(f.data), f.name, (v) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? null : 'each line must be a JSON object'));
  const seen = new Set<string>();
  let out = '';
  let rows = 0, duplicates = 0;
  for (const file of parsed) {
    for (const row of file) {
      const key = JSON.stringify(row.messages ?? row);
      if (seen.has(key)) { duplicates++; continue; }
      seen.add(key);
      out += JSON.stringify(row) + '\n';
      rows++;
    }
  }
  return { jsonl: out, rows, duplicates };
}
