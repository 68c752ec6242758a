/**
 * A task file's rows: the fields a row may have, their common aliases (a GSM8K `question`, a MATH
 * `problem`/`solution`), and the check that turns a raw record into a `TaskRow` or says, for the row and
 * the field, what is wrong and how to fix it. Every problem of a file is collected (up to a cap), not
 * just the first.
 */
import type { Split } from '../../contracts.ts';
import { KNOWN_TOOLS, MAX_PROMPT_CHARS, type KnownTool } from '../types.ts';
import { checkVerifier, show, type VerifierConfig } from './verifiers.ts';

/** One question of a task file. */
export interface TaskRow {
  /** The user message. */
  prompt: string;
  /** The reference answer; a number is kept as its text. */
  answer: string | number;
  /** Difficulty level 1–5; default 1. */
  level?: number;
  /** A split the row is pinned to; default: decided by a hash of the row's content. */
  split?: Split;
  /** Built-in tools the model gets for this row. */
  tools?: KnownTool[];
  /** This row's verifier, over the config's. */
  verifier?: VerifierConfig;
  /** Option texts of a multiple-choice row, listed under the prompt as A) … E). */
  choices?: string[];
  /** The row's other fields (ids, sources), kept for a js verifier. */
  extra?: Record<string, unknown>;
  /** Where the row is in its file, for messages: "line 12", "row 3 (line 5)". */
  source?: string;
}

/** Field names a row may use for each field, the canonical one first; matched case-insensitively. */
export const FIELD_ALIASES = {
  prompt: ['prompt', 'question', 'problem', 'input', 'query', 'instruction'],
  answer: [
    'answer',
    'target',
    'expected',
    'expected_answer',
    'final_answer',
    'ground_truth',
    'output',
    'label',
    'solution',
  ],
  level: ['level', 'difficulty'],
  split: ['split'],
  tools: ['tools'],
  verifier: ['verifier'],
  choices: ['choices', 'options'],
} as const;
type Field = keyof typeof FIELD_ALIASES;
const ALIASES = new Set<string>(Object.values(FIELD_ALIASES).flat());

const SPLIT_ALIASES: Record<string, Split> = {
  train: 'train',
  training: 'train',
  test: 'test',
  validation: 'validation',
  valid: 'validation',
  val: 'validation',
  dev: 'validation',
};
const MAX_CHOICES = 5;

/** How deep a row's values may nest (lists in objects in lists…); deeper data is refused for its row. */
export const MAX_NESTING = 100;

/** Problems reported at most; the rest are counted. */
export const MAX_PROBLEMS = 20;

export class TaskFileError extends Error {
  constructor(
    readonly problems: string[],
    readonly fileName: string,
  ) {
    super(
      `${fileName}: ${problems.length === 1 ? problems[0] : `${problems.length} problems:\n  - ${capProblems(problems).join('\n  - ')}`}`,
    );
    this.name = 'TaskFileError';
  }
}

/** At most MAX_PROBLEMS problems, then a line counting the rest. */
function capProblems(problems: string[]): string[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more problems`];
}

/**
 * Checks one raw record (from JSON, a CSV row of strings, a Parquet row) and returns the row, or null
 * after pushing its problems, each starting with `where` ("line 12") and naming the field.
 */
export function normalizeRow(raw: unknown, where: string, problems: string[]): TaskRow | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push(`${where}: a row must be an object with "prompt" and "answer", got ${show(raw)}`);
    return null;
  }
  const deep = Object.keys(raw).find((k) => nestedDeeperThan((raw as Record<string, unknown>)[k], MAX_NESTING));
  if (deep !== undefined) {
    problems.push(
      `${where}: "${deep}" is nested too deeply (more than ${MAX_NESTING} levels); a row's fields hold text, numbers or shallow data`,
    );
    return null;
  }
  const { fields, extra } = pickFields(raw as Record<string, unknown>);
  const before = problems.length;
  const fail: Fail = (field, message) => problems.push(`${where}: "${field}" ${message}`);

  checkPrompt(fields.prompt, where, problems, fail);
  checkAnswer(fields.answer, where, problems, fail);
  const row = {
    prompt: String(fields.prompt?.value ?? ''),
    answer: typeof fields.answer?.value === 'number' ? String(fields.answer.value) : String(fields.answer?.value ?? ''),
  } as TaskRow;
  const level = present(fields.level) ? readLevel(fields.level!.value) : undefined;
  if (level === null)
    fail(fields.level!.name, `must be a whole number 1–5 (1 the easiest), got ${show(fields.level!.value)}`);
  else if (level !== undefined) row.level = level;

  if (present(fields.split)) readSplitField(fields.split!, row, fail);
  if (present(fields.tools)) readToolsField(fields.tools!, row, fail);
  if (present(fields.verifier)) {
    const raw = fields.verifier!.value;
    const value = typeof raw === 'string' && raw.trim().startsWith('{') ? parseJson(raw) : raw;
    const { verifier, problems: wrong } = checkVerifier(value, 'verifier');
    for (const p of wrong) problems.push(`${where}: ${p.message}`);
    if (verifier) row.verifier = verifier;
  }
  if (present(fields.choices)) readChoicesField(fields.choices!, row, fail);
  if (Object.keys(extra).length) row.extra = extra;
  row.source = where;
  return problems.length > before ? null : row;
}

/** A field of a raw row: the name it had there (an alias, any case) and its value. */
interface RowField {
  name: string;
  value: unknown;
}

/** Records a problem of one field of the row. */
type Fail = (field: string, message: string) => void;

function checkPrompt(prompt: RowField | undefined, where: string, problems: string[], fail: Fail): void {
  if (prompt === undefined || prompt.value === null || prompt.value === undefined) {
    problems.push(`${where}: "prompt" is missing; add the question as "prompt" (or ${alternatives('prompt')})`);
  } else if (typeof prompt.value !== 'string' || prompt.value.trim() === '') {
    fail(prompt.name, `must be the question as non-empty text, got ${show(prompt.value)}`);
  } else if (prompt.value.length > MAX_PROMPT_CHARS) {
    fail(
      prompt.name,
      `is ${prompt.value.length} characters, above the ${MAX_PROMPT_CHARS} a task's prompt may have; keep the question short`,
    );
  }
}

function checkAnswer(answer: RowField | undefined, where: string, problems: string[], fail: Fail): void {
  if (answer === undefined || answer.value === null || answer.value === undefined) {
    problems.push(`${where}: "answer" is missing; add the expected answer as "answer" (or ${alternatives('answer')})`);
  } else if (
    !(typeof answer.value === 'string' && answer.value.trim() !== '') &&
    !(typeof answer.value === 'number' && Number.isFinite(answer.value))
  ) {
    fail(answer.name, `must be the expected answer as text or a number, got ${show(answer.value)}`);
  }
}

function readSplitField(field: RowField, row: TaskRow, fail: Fail): void {
  const split = typeof field.value === 'string' ? SPLIT_ALIASES[field.value.trim().toLowerCase()] : undefined;
  if (split) row.split = split;
  else
    fail(
      'split',
      `must be train, validation or test (or leave it empty to split by content), got ${show(field.value)}`,
    );
}

function readToolsField(field: RowField, row: TaskRow, fail: Fail): void {
  const tools = readList(field.value);
  const unknown = tools?.filter((t) => !(KNOWN_TOOLS as readonly string[]).includes(t));
  if (!tools) fail('tools', `must be a list of tool names like ["calc"] or "calc,js", got ${show(field.value)}`);
  else if (unknown!.length)
    fail(
      'tools',
      `names unknown tools ${unknown!.map((t) => show(t)).join(', ')}; the built-in tools are ${KNOWN_TOOLS.join(', ')}`,
    );
  else if (tools.length) row.tools = [...new Set(tools)] as KnownTool[];
}

/** A list of 2–MAX_CHOICES option texts, as a list or as its JSON text (a CSV cell). */
function readChoicesField(field: RowField, row: TaskRow, fail: Fail): void {
  const raw = field.value;
  const value = typeof raw === 'string' && raw.trim().startsWith('[') ? parseJson(raw) : raw;
  const ok =
    Array.isArray(value) &&
    value.length >= 2 &&
    value.length <= MAX_CHOICES &&
    value.every((c) => (typeof c === 'string' && c.trim() !== '') || typeof c === 'number');
  if (ok) row.choices = value.map((c) => String(c).trim());
  else fail(field.name, `must be a list of 2–${MAX_CHOICES} option texts like ["12", "14", "16"], got ${show(value)}`);
}

/** The row's fields by canonical name (the first alias present), and the rest. */
function pickFields(raw: Record<string, unknown>): {
  fields: Partial<Record<Field, RowField>>;
  extra: Record<string, unknown>;
} {
  const byLower = new Map(Object.keys(raw).map((k) => [k.trim().toLowerCase(), k]));
  const fields: Partial<Record<Field, RowField>> = {};
  const used = new Set<string>();
  for (const [field, aliases] of Object.entries(FIELD_ALIASES) as [Field, readonly string[]][]) {
    for (const alias of aliases) {
      const key = byLower.get(alias);
      if (key === undefined || !present({ name: key, value: raw[key] })) continue;
      fields[field] = { name: key, value: raw[key] };
      used.add(key);
      break;
    }
  }
  // The rest, but for empty alias fields (a CSV's empty "choices" cell, a Parquet null).
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (used.has(k) || v === undefined || (ALIASES.has(k.trim().toLowerCase()) && !present({ name: k, value: v })))
      continue;
    extra[k] = jsonSafe(v);
  }
  return { fields, extra };
}

/** A field counts when it holds something: CSV gives empty strings for empty cells. */
function present(field: RowField | undefined): boolean {
  return (
    field !== undefined &&
    field.value !== null &&
    field.value !== undefined &&
    !(typeof field.value === 'string' && field.value.trim() === '')
  );
}

function alternatives(field: Field): string {
  return FIELD_ALIASES[field]
    .slice(1)
    .map((a) => `"${a}"`)
    .join(', ');
}

/** 3, "3", "Level 3" → 3; null when not a level 1–5. */
function readLevel(value: unknown): number | null {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'bigint'
        ? Number(value)
        : Number(
            String(value)
              .trim()
              .replace(/^level\s*/i, ''),
          );
  return Number.isInteger(n) && n >= 1 && n <= 5 ? n : null;
}

/** ["calc", "js"], '["calc"]', "calc,js", "calc js" → names; null when not a list of strings. */
function readList(value: unknown): string[] | null {
  if (typeof value === 'string') {
    const s = value.trim();
    if (s.startsWith('[')) return readList(parseJson(s));
    return s.split(/[\s,;]+/).filter(Boolean);
  }
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value.map((v) => v.trim()) : null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Whether `value` nests more than `max` levels of lists and objects; a loop, so depth costs no stack. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v) || v instanceof Date) continue;
    if (depth >= max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Plain JSON data: BigInt → number (or text when too large), Date → ISO text, typed arrays → arrays. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  if (value instanceof Date) return value.toISOString();
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return value;
}
