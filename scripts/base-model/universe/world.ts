/**
 * The procedural tool universe the base model is built on: a *family* is a kind of tool world (a
 * catalogue lookup, a directory of people, a job queue …); a *world* is one family with its surface
 * drawn from a seed: the tools' names, descriptions and parameter names. Each world is an ordinary
 * Spindle environment with its own tools (`ownTools` + `openTools`), so its system prompt, tool list,
 * calls and observations are rendered by the same code as a user's environment module, and its expert
 * is played through the real agent loop.
 *
 * Tool names are drawn so that the name alone often does not tell the tools apart (opaque names, a
 * shared prefix): the task's wording points to the right tool only through its description.
 */
import type { ToolSchema, Task, Trajectory } from '../../../src/contracts.ts';
import { defineEnvironment } from '../../../src/envs/define.ts';
import { cleanAnswer, finalAnswer } from '../../../src/envs/answer.ts';
import { answerTurn, callTurn } from '../../../src/envs/expert-text.ts';
import { ownToolRefusal } from '../../../src/envs/own-tool-refusal.ts';
import type { Environment, OwnToolSession, TaskItem } from '../../../src/envs/types.ts';
import { createRng, type Rng } from '../../../src/rng.ts';
import { ToolError, type TemplateSet } from './roles.ts';

export interface ToolDef {
  name: string;
  description: string;
  params: Record<string, { type: 'string' | 'number'; description: string }>;
  /** Runs one call against the task's data and the episode's state; returns the observation text. */
  run(args: Record<string, unknown>, state: Record<string, unknown>, data: Record<string, unknown>): string;
}

/** One expert turn: a thought, then one call or the final answer. */
export type PlanStep =
  { think: string; call: { name: string; args: Record<string, unknown> } } | { think: string | null; answer: string };

export interface FamilyTask extends TaskItem {
  /** The exact final answer. */
  answer: string;
  /** The expert's turns. */
  plan: PlanStep[];
  /** Observations the answer must have been read from: a successful call whose result contains each. */
  evidence: string[];
}

/** A world's drawn surface: a tool per role, plus what the family keeps for its prompts. */
export interface Surface {
  tools: Record<string, { name: string; description: string; params: Record<string, string> }>;
}

export interface Family<S extends Surface = Surface> {
  name: string;
  levels: number[];
  /** The tool names, descriptions and parameter names of one world. */
  surface(rng: Rng): S;
  /** The tools of a world (their runs read the task's data). */
  tools(surface: S): ToolDef[];
  /** One task of a world at a level, worded from the build's templates or the held-out one. */
  sample(surface: S, rng: Rng, level: number, templates: TemplateSet): FamilyTask;
  /** The episode's starting state (a copy: tools may change it). Default {}. */
  init?(data: Record<string, unknown>): Record<string, unknown>;
}

/** The schema a user's module would get for this tool (all parameters required). */
function schemaOf(tool: ToolDef): ToolSchema {
  return {
    name: tool.name,
    description: tool.description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(tool.params).map(([k, v]) => [k, { type: v.type, description: v.description }]),
      ),
      required: Object.keys(tool.params),
    },
  };
}

/** The text of an expert plan, in the compact layout the system prompt shows. */
export function planTurns(plan: PlanStep[]): string[] {
  return plan.map((step) =>
    'call' in step
      ? callTurn(callThought(step.think, step.call.name), [{ name: step.call.name, arguments: step.call.args }])
      : answerTurn(step.answer, step.think),
  );
}

/**
 * A thought that starts with the tool's name says so first: "get_count reads a counter." becomes "Use
 * get_count; it reads a counter.", as the shipped environments' thoughts do ("Use calc."). The decision to
 * call is then the same token in every world, and the tool's name is copied from the list after it; when
 * each world's thoughts began with its own tool names, no single one of them was as likely after `<think>`
 * on an unfamiliar question as the direct answer's one thought.
 */
function callThought(think: string, tool: string): string {
  return think.startsWith(`${tool} `) ? `Use ${tool}; it ${think.slice(tool.length + 1)}` : think;
}

/** The answer is right and every piece of evidence was shown by a successful call. */
function scoreEpisode(task: Task, trajectory: Trajectory): number {
  const data = task.data as { answer: string; evidence: string[] };
  if (cleanAnswer(finalAnswer(trajectory)).toLowerCase() !== data.answer.toLowerCase()) return 0;
  const seen = trajectory.steps.filter((s) => s.tool_call && !s.tool_call.error).map((s) => s.observation);
  return data.evidence.every((e) => seen.some((o) => o.includes(e))) ? 1 : 0;
}

/** One world of a family as a Spindle environment; `worldSeed` draws its surface. */
export function worldEnvironment<S extends Surface>(
  family: Family<S>,
  worldSeed: number,
  templates: TemplateSet = 'build',
): Environment {
  const surface = family.surface(createRng(worldSeed));
  const tools = family.tools(surface);
  const byName = new Map(tools.map((t) => [t.name, { tool: t, schema: schemaOf(t) }]));
  return defineEnvironment({
    name: `u_${family.name}_${worldSeed}${templates === 'held_out' ? '_h' : ''}`,
    description: `Procedural ${family.name} world ${worldSeed}`,
    tags: ['universe', family.name],
    difficulties: family.levels,
    requiredTools: [],
    systemStyle: 'described',
    ownTools: [...byName.values()].map((t) => t.schema),
    sample(rng, level) {
      const t = family.sample(surface, rng, level, templates);
      return {
        prompt: t.prompt,
        key: t.key,
        data: { ...t.data, answer: t.answer, evidence: t.evidence, plan: t.plan },
      };
    },
    evaluate: scoreEpisode,
    expert: (task) => planTurns((task.data as { plan: PlanStep[] }).plan),
    async openTools(task): Promise<OwnToolSession> {
      const data = task.data as Record<string, unknown>;
      const state = family.init?.(data) ?? {};
      return {
        async call(name, args) {
          const own = byName.get(name);
          if (!own)
            return {
              result: '',
              error: `unknown tool "${name}"; available tools: ${tools.map((t) => t.name).join(', ')}`,
            };
          // A missing argument is refused before the tool runs, as an environment module's are.
          const refused = ownToolRefusal(own.schema, args);
          if (refused) return { result: '', error: refused };
          try {
            return { result: own.tool.run(args, state, data), error: null };
          } catch (e) {
            if (e instanceof ToolError) return { result: '', error: e.message };
            throw e;
          }
        },
        dispose() {},
      };
    },
  });
}
