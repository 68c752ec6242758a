/**
 * Environments written as one JavaScript module (a community environment, in a file a user
 * writes): the module's default export (or its named exports) gives
 *
 *   name, description, tags, levels?, requiredTools?, instructions?, systemStyle?, testFraction?,
 *   sample(rng, level) → { prompt, data?, key? }      the task, drawn from `rng` only
 *   evaluate(task, trajectory, state) → score | null  in [0, 1]
 *   tools?: { NAME: { description, parameters, run(args, state, task) } }   its own tools
 *   init?(task) → state                               the per-episode state the tools share
 *   expert?(task) → [turn, …]  a turn is the final answer (a string) or { tool, args, think? }
 *   chance?(level) → number    the success a task-blind policy reaches by luck, from 0 to 0.1 (MAX_DECLARED_CHANCE)
 *
 * All of it runs in QuickJS (sandbox/guest-module.ts) under deadlines and a heap limit; nothing of
 * the module runs as host JavaScript, and on a page's engine or a Node main thread none of it runs in
 * that thread either: a module host thread runs it (module-host.ts). Each episode gets a fresh context: `init(task)` builds its state,
 * each call of an own tool runs `run(args, state, task)` there. `evaluate` replays the episode's own
 * tool calls on a fresh state and scores with it, so a stored trajectory can be re-scored at any time
 * (as task-toolbox.ts does for the sandbox's tools): tools must be deterministic in (args, state, task).
 */
import type { SystemPromptStyle, Task, ToolSchema, Trajectory } from '../contracts.ts';
import type { Rng } from '../rng.ts';
import { GuestModuleError } from '../sandbox/guest-module.ts';
import { TOOL_NAMES } from '../sandbox/tool-schemas.ts';
import { defineEnvironment, EnvironmentSpecError, MAX_DECLARED_CHANCE } from './define.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { ownToolRefusal } from './own-tool-refusal.ts';
import { openModuleRunner } from './module-host.ts';
import { isObject, type ModuleRunner } from './module-runner.ts';
import type { Environment, EnvironmentSpec, OwnToolSession, TaskItem } from './types.ts';

export interface ModuleEnvironmentOptions {
  /** The file name errors and stack lines use. */
  fileName?: string;
  /** Deadline for loading, `sample`, `expert`, `chance` and `evaluate`, in ms of guest running time. */
  timeoutMs?: number;
  /** Heap limit of each context, in bytes. */
  memoryBytes?: number;
  /** `host` (default where this thread may block): the module runs in a thread of its own; `here`: in this one. */
  thread?: 'host' | 'here';
}

/** A module that cannot become an environment: every problem, and the line of the first when known. */
export class EnvironmentModuleError extends Error {
  constructor(
    readonly problems: string[],
    readonly line: number | null,
  ) {
    super(
      problems.length === 1
        ? problems[0]
        : `The environment module has ${problems.length} problems:\n  - ${problems.join('\n  - ')}`,
    );
    this.name = 'EnvironmentModuleError';
  }
}

export interface ModuleEnvironment {
  env: Environment;
  /** True when the module runs in a host thread of its own (module-host.ts), not in this thread. */
  hosted: boolean;
  /** Frees the module's contexts (and stops its host thread, where it has one). */
  close(): void;
}

const DEFAULTS = { fileName: 'env.js', timeoutMs: 2000, memoryBytes: 16 * 1024 * 1024 };
/** A module's source is code, not data: a bigger file is almost surely a mistake (data belongs in a task file). */
export const MAX_MODULE_CHARS = 1024 * 1024;
const TOOL_NAME = /^[a-z_][a-z0-9_]{0,39}$/;
/** A module's own tools at most: each is listed in every episode's system prompt, and the audit probes each. */
const MAX_OWN_TOOLS = 32;
/** Their schemas (names, descriptions, parameters) at most, as JSON characters: the system prompt's tool list. */
const MAX_TOOL_LIST_CHARS = 16_000;

/** Loads, validates and wraps a module; throws EnvironmentModuleError naming each problem (and the line). */
export async function loadEnvironmentModule(
  source: string,
  options: ModuleEnvironmentOptions = {},
): Promise<ModuleEnvironment> {
  const o = { ...DEFAULTS, ...options };
  if (source.length > MAX_MODULE_CHARS) {
    throw new EnvironmentModuleError(
      [
        `the module is ${source.length} characters, above the ${MAX_MODULE_CHARS} an environment module may have; keep tasks' data in a task file`,
      ],
      null,
    );
  }
  let runner: ModuleRunner;
  try {
    runner = await openModuleRunner(source, o, o.thread ?? 'host');
  } catch (e) {
    throw asModuleError(e);
  }
  try {
    const spec = moduleSpec(runner);
    try {
      return { env: defineEnvironment(spec), hosted: runner.hosted, close: () => runner.close() };
    } catch (e) {
      if (e instanceof EnvironmentSpecError) throw new EnvironmentModuleError(e.problems.map(moduleWording), null);
      throw e;
    }
  } catch (e) {
    runner.close();
    throw asModuleError(e);
  }
}

/**
 * The environment the module's export describes: its metadata, its functions run by `runner`, its own tools' calls
 * checked against their schemas before they reach it; throws EnvironmentModuleError for a missing export or tool.
 */
function moduleSpec(runner: ModuleRunner): EnvironmentSpec {
  const { meta, functions } = runner.info;
  if (!isObject(meta))
    throw new EnvironmentModuleError(
      ['the module exports nothing: write `export default { name, description, tags, sample, evaluate }`'],
      null,
    );
  const ownTools = readToolSchemas(meta.tools);
  const has = (name: string) => functions.includes(name);
  for (const tool of ownTools) {
    if (!has(`tools.${tool.name}.run`))
      throw new EnvironmentModuleError(
        [`tools.${tool.name}.run is missing: a function (args, state, task) => text`],
        null,
      );
  }
  const layout = meta.systemStyle === 'full' ? 'full' : 'compact';
  const schemaOf = new Map(ownTools.map((t) => [t.name, t]));
  /** Why a call cannot run, or null: such a call never reaches the module. */
  const refusal = (name: string, args: Record<string, unknown>) => ownToolRefusal(schemaOf.get(name)!, args);

  const spec: EnvironmentSpec = {
    name: meta.name as string,
    description: meta.description as string,
    tags: meta.tags as string[],
    difficulties: (meta.levels ?? meta.difficulties) as number[] | undefined,
    requiredTools: (meta.requiredTools ?? []) as string[],
    systemStyle: meta.systemStyle as SystemPromptStyle | undefined,
    instructions: meta.instructions as string | undefined,
    testFraction: meta.testFraction as number | undefined,
    ownTools,
    sample: has('sample')
      ? (rng: Rng, level: number): TaskItem => readItem(runner.sample(rng.state(), level))
      : (undefined as never),
    evaluate: has('evaluate')
      ? async (task: Task, trajectory: Trajectory) => {
          // The episode's own tool calls, replayed on a fresh state, as the episode ran them.
          const calls = trajectory.steps.flatMap((s) => {
            const call = s.tool_call;
            return call && schemaOf.has(call.tool_name) && refusal(call.tool_name, call.parameters) === null
              ? [{ name: call.tool_name, args: call.parameters }]
              : [];
          });
          const score = await runner.evaluate(task, trajectoryForGuest(trajectory), calls);
          return score === undefined ? null : (score as number | null);
        }
      : (undefined as never),
    openTools: async (task, { timeoutMs }): Promise<OwnToolSession> => {
      const session = await runner.openSession(task, timeoutMs);
      return {
        call: async (name, args) => {
          const refused = refusal(name, args);
          return refused ? { result: '', error: refused } : session.call(name, args);
        },
        dispose: () => session.dispose(),
      };
    },
  };
  if (has('expert')) spec.expert = (task) => readExpert(runner.expert(task), layout);
  if (has('chance')) spec.chance = (level) => readChance(runner.chance(level), level);
  return spec;
}

/** The spec's field names as a module author writes them. */
function moduleWording(problem: string): string {
  return problem.replace('"difficulties"', '"levels"').replace('(rng, difficulty)', '(rng, level)');
}

function asModuleError(e: unknown): EnvironmentModuleError {
  if (e instanceof EnvironmentModuleError) return e;
  if (e instanceof GuestModuleError) return new EnvironmentModuleError([e.message], e.line);
  return new EnvironmentModuleError([e instanceof Error ? e.message : String(e)], null);
}

/** `tools` as schemas: `parameters` as a JSON schema, or the shorthand `{ arg: { type, description } }` (all required). */
function readToolSchemas(tools: unknown): ToolSchema[] {
  if (tools === undefined) return [];
  if (!isObject(tools))
    throw new EnvironmentModuleError(
      ['"tools" must be an object: { name: { description, parameters, run(args, state, task) } }'],
      null,
    );
  const count = Object.keys(tools).length;
  if (count > MAX_OWN_TOOLS) {
    const problem = `"tools" has ${count} tools, above the ${MAX_OWN_TOOLS} a module may have (each is listed in every prompt); merge related ones`;
    throw new EnvironmentModuleError([`${problem} into one tool with an argument`], null);
  }
  const problems: string[] = [];
  const schemas: ToolSchema[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    if (!TOOL_NAME.test(name)) problems.push(`tool "${name}": a tool name is lower_snake_case, at most 40 characters`);
    if ((TOOL_NAMES as readonly string[]).includes(name))
      problems.push(
        `tool "${name}" would hide the sandbox's own ${name} tool; rename it (or list "${name}" in requiredTools)`,
      );
    if (!isObject(tool) || typeof tool.description !== 'string' || tool.description.trim() === '') {
      problems.push(`tool "${name}": "description" is missing (one line the model reads)`);
      continue;
    }
    const params = tool.parameters ?? {};
    if (!isObject(params)) {
      problems.push(
        `tool "${name}": "parameters" must be an object like { city: { type: "string", description: "…" } }`,
      );
      continue;
    }
    const full = params.type === 'object' && isObject(params.properties);
    const properties = (full ? params.properties : params) as Record<string, unknown>;
    const bad = Object.entries(properties).filter(([, p]) => !isObject(p) || typeof p.type !== 'string');
    if (bad.length) problems.push(`tool "${name}": each parameter needs a "type" (${bad.map(([k]) => k).join(', ')})`);
    const required = full && Array.isArray(params.required) ? (params.required as string[]) : Object.keys(properties);
    schemas.push({
      name,
      description: tool.description,
      parameters: { type: 'object', properties: properties as ToolSchema['parameters']['properties'], required },
    });
  }
  if (problems.length) throw new EnvironmentModuleError(problems, null);
  const listChars = JSON.stringify(schemas).length;
  if (listChars > MAX_TOOL_LIST_CHARS) {
    const problem = `the tools' descriptions and parameters are ${listChars} characters of JSON, above the ${MAX_TOOL_LIST_CHARS}`;
    throw new EnvironmentModuleError([`${problem} the prompt's tool list may take; shorten the descriptions`], null);
  }
  return schemas;
}

function readItem(value: unknown): TaskItem {
  if (!isObject(value) || typeof value.prompt !== 'string' || value.prompt.trim() === '') {
    throw new Error(
      `sample must return { prompt, data?, key? } with a non-empty prompt; it returned ${JSON.stringify(value)?.slice(0, 200)}`,
    );
  }
  if (value.data !== undefined && !isObject(value.data))
    throw new Error('sample: "data" must be an object (what evaluate and expert read)');
  if (value.key !== undefined && typeof value.key !== 'string')
    throw new Error('sample: "key" must be a string (the item\'s canonical content, which decides its split)');
  return {
    prompt: value.prompt,
    data: (value.data ?? {}) as Record<string, unknown>,
    ...(value.key !== undefined ? { key: value.key } : {}),
  };
}

/** What `chance(level)` declares, checked: a number from 0 to MAX_DECLARED_CHANCE, never coerced. */
function readChance(value: unknown, level: number): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_DECLARED_CHANCE) return value;
  const got = typeof value === 'number' ? String(value) : (JSON.stringify(value)?.slice(0, 80) ?? String(value));
  throw new RangeError(
    `chance(${level}) returned ${got}; it must return a number from 0 to ${MAX_DECLARED_CHANCE} (the share of tasks a policy that ignores ` +
      'them solves by luck): an environment that pays more often than that for ignoring the task cannot be trained on',
  );
}

function readExpert(value: unknown, layout: 'compact' | 'full'): string[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new Error('expert must return a non-empty array of turns: strings (the answer) or { tool, args, think? }');
  return value.map((turn, i) => {
    if (typeof turn === 'string') return answerTurn(turn);
    if (isObject(turn) && typeof turn.tool === 'string') {
      return callTurn(
        typeof turn.think === 'string' ? turn.think : null,
        [{ name: turn.tool, arguments: (turn.args ?? {}) as Record<string, unknown> }],
        layout,
      );
    }
    throw new Error(
      `expert turn ${i + 1} must be a string (the answer) or { tool, args, think? }, got ${JSON.stringify(turn)?.slice(0, 120)}`,
    );
  });
}

/** What a module's `evaluate` reads: the conversation and its steps, without token arrays. */
function trajectoryForGuest(t: Trajectory): Record<string, unknown> {
  return {
    final_response: t.final_response,
    finish_reason: t.finish_reason,
    messages: t.messages,
    steps: t.steps.map((s) => ({
      turn: s.turn,
      thought: s.thought,
      tool_call: s.tool_call && {
        tool_name: s.tool_call.tool_name,
        parameters: s.tool_call.parameters,
        result: s.tool_call.result,
        error: s.tool_call.error,
      },
      observation: s.observation,
    })),
  };
}
