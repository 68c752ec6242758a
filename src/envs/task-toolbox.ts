/**
 * The sandbox a task runs in: a toolbox with the environment's tools, seeded with the task's files,
 * git repository and hidden setup calls. Environments that check the final state (shell_exec, git_repo)
 * rebuild it by replaying the trajectory's tool calls on a fresh toolbox, so `evaluate(task, trajectory)`
 * needs nothing but stored data and can re-score an old trajectory at any time.
 */
import type { Trajectory } from '../contracts.ts';
import {
  createToolbox,
  DEFAULT_MAX_RESULT_CHARS,
  isToolName,
  TOOL_NAMES,
  TOOL_SCHEMAS,
  truncate,
  type Toolbox,
  type ToolboxOptions,
  type ToolResult,
} from '../sandbox/index.ts';
import type { ToolSchema } from '../contracts.ts';
import type { OwnToolSession, ToolboxSetup } from './types.ts';

export type ToolboxExtras = Omit<ToolboxOptions, 'tools' | 'files' | 'gitRepo'>;

/** A toolbox in the task's starting state. Throws when a setup call fails: that is an environment bug. */
export async function openTaskToolbox(
  setup: ToolboxSetup,
  tools: readonly string[],
  extras: ToolboxExtras = {},
): Promise<Toolbox> {
  const toolbox = await createToolbox({ ...extras, tools: [...tools], files: setup.files, gitRepo: setup.gitRepo });
  for (const call of setup.calls ?? []) {
    const result = await toolbox.call(call.tool, call.args);
    if (result.error !== null) {
      toolbox.dispose();
      throw new Error(`task setup call ${call.tool}(${JSON.stringify(call.args)}) failed: ${result.error}`);
    }
  }
  return toolbox;
}

/**
 * The task's toolbox after re-running every tool call the trajectory made, in order (failed ones too:
 * they may have changed state before failing). Unparseable calls (no tool name) are skipped.
 */
export async function replayTrajectory(
  setup: ToolboxSetup,
  tools: readonly string[],
  trajectory: Trajectory,
  extras: ToolboxExtras = {},
): Promise<Toolbox> {
  const toolbox = await openTaskToolbox(setup, tools, extras);
  for (const step of trajectory.steps) {
    const call = step.tool_call;
    if (call && call.tool_name !== '' && tools.includes(call.tool_name))
      await toolbox.call(call.tool_name, call.parameters);
  }
  return toolbox;
}

/** What an episode calls tools through: the sandbox's tools and the environment's own. */
export interface ToolCaller {
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
}

/** An environment's own tools for one task (Environment.ownTools / openTools). */
export interface OwnTools {
  schemas: readonly ToolSchema[];
  open(): Promise<OwnToolSession>;
}

/**
 * A task's tools, only built when the first tool is called: an episode that answers at once costs no
 * sandbox (no git repository, no module load). `open()` builds them once; a failing setup call throws there.
 */
export interface LazyTaskToolbox {
  /** The schemas the system prompt lists: the sandbox's in its order (as `createToolbox` gives them), then the environment's own. */
  readonly schemas: ToolSchema[];
  open(): Promise<ToolCaller>;
  dispose(): void;
}

export function lazyTaskToolbox(
  setup: ToolboxSetup,
  tools: readonly string[],
  extras: ToolboxExtras = {},
  own?: OwnTools,
): LazyTaskToolbox {
  const unknown = tools.filter((t) => !isToolName(t));
  if (unknown.length)
    throw new Error(
      `unknown tool(s) ${unknown.map((t) => `"${t}"`).join(', ')}; the whitelist is ${TOOL_NAMES.join(', ')}`,
    );
  const builtin = TOOL_NAMES.filter((t) => tools.includes(t)).map((t) => TOOL_SCHEMAS[t]);
  const schemas = [...builtin, ...(own?.schemas ?? [])];
  const ownNames = new Set(own?.schemas.map((s) => s.name));
  let sandbox: Promise<Toolbox> | null = null;
  let session: Promise<OwnToolSession> | null = null;
  const openSandbox = () => (sandbox ??= openTaskToolbox(setup, tools, extras));
  const maxChars = extras.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
  const caller: ToolCaller = {
    call: async (name, args) => {
      if (ownNames.has(name)) {
        // The environment's own tools get the sandbox tools' cap: a tool returning megabytes cannot flood the context.
        const r = await (await (session ??= own!.open())).call(name, args);
        return { result: truncate(r.result, maxChars), error: r.error === null ? null : truncate(r.error, maxChars) };
      }
      if (ownNames.size > 0 && !tools.includes(name)) {
        return {
          result: '',
          error: `unknown tool "${name}"; available tools: ${schemas.map((s) => s.name).join(', ')}`,
        };
      }
      return (await openSandbox()).call(name, args);
    },
  };
  return {
    schemas,
    // The sandbox is built here, so a failing setup call surfaces on the episode's first call.
    open: async () => (tools.length > 0 ? (await openSandbox(), caller) : caller),
    dispose: () => {
      void sandbox?.then(
        (t) => t.dispose(),
        () => undefined,
      );
      void session?.then(
        (s) => s.dispose(),
        () => undefined,
      );
    },
  };
}

/**
 * True when the trajectory called none of these tools: its sandbox is still in the starting state. A
 * change task's starting state never meets its expectation (each asks for something that is not there
 * yet), so such a trajectory fails it without a replay.
 */
export function changedNothing(trajectory: Trajectory, tools: readonly string[]): boolean {
  return !trajectory.steps.some((s) => s.tool_call !== null && tools.includes(s.tool_call.tool_name));
}
