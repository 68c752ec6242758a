/**
 * The user's environments inside the engine worker: the only place in the app, besides the
 * rollout workers, where a user's environment code runs, and there only in QuickJS under its deadlines
 * and heap limit. The Environments screen loads and checks drafts here (the audit of
 * rollout/env-audit.ts, its progress streamed back, cancellable); saved environments are installed here
 * so the Playground's tasks, expert and judging and the engine's runs use them like built-ins.
 */
import type { EnvironmentSource, Split, Task, Trajectory } from '../../contracts.ts';
import { EnvironmentModuleError, loadEnvironmentModule } from '../../envs/module-env.ts';
import { getEnvironment, isBuiltinEnvironment, listEnvironments } from '../../envs/registry.ts';
import { buildEnvironment, environmentSourceFromFile, installEnvironmentSource } from '../../envs/sources.ts';
import { withCheckBudget } from '../../envs/check-budget.ts';
import type { Environment } from '../../envs/types.ts';
import { auditEnvironment, type AuditOptions, type EnvironmentAudit } from '../../rollout/env-audit.ts';
import { GuestModuleError } from '../../sandbox/guest-module.ts';

export type { EnvironmentAudit };

/** What the Environments screen edits: a module's text not yet named, or a task file's source. */
export type EnvironmentDraft =
  { kind: 'module'; source: string; file: string | null } | Extract<EnvironmentSource, { kind: 'tasks' }>;

/** An environment as the app's pickers show it. */
export interface EngineEnvironmentInfo {
  name: string;
  description: string;
  tags: string[];
  levels: number[];
  /** Its own tools (user modules) and the sandbox tools it needs. */
  tools: string[];
  /** Whether it has a scripted expert (the Playground's "Scripted expert" policy). */
  expert: boolean;
  builtin: boolean;
}

/** A draft that could not become an environment: every problem, and the module line of the first when known. */
export interface EnvironmentFailure {
  ok: false;
  problems: string[];
  line: number | null;
}

export type EnvironmentLoad = { ok: true; source: EnvironmentSource; info: EngineEnvironmentInfo } | EnvironmentFailure;
export type EnvironmentCheck =
  { ok: true; source: EnvironmentSource; info: EngineEnvironmentInfo; audit: EnvironmentAudit } | EnvironmentFailure;

/** Items per level the live check gives the expert and each task-blind policy: a few seconds for a small module. */
const CHECK_ITEMS = 8;
/** Entry-level items the check samples the policy on: enough to tell "never" from "sometimes" at a glance. */
export const CHECK_POLICY_ITEMS = 4;

/** The policy a check samples (rollout/env-audit.ts), as the engine gives it. */
export type CheckPolicy = NonNullable<AuditOptions['policy']>;

export class EnvironmentWorkshop {
  private readonly checks = new Map<string, AbortController>();

  /** Loads a draft (not registering it): its name and what it offers, or every problem with its line. */
  async load(draft: EnvironmentDraft): Promise<EnvironmentLoad> {
    let built: { env: Environment; close(): void; source: EnvironmentSource };
    try {
      built = await build(draft);
    } catch (error) {
      return failure(error);
    }
    built.close();
    return { ok: true, source: built.source, info: describe(built.env) };
  }

  /**
   * The live check: load the draft, then audit it (five sampled tasks, the expert per level, the best
   * task-blind policy per level, and `policy` on a few entry-level items when given), saying each step as it starts (a line ending in "…") and each part as it
   * finishes through `onProgress`. `cancelCheck(checkId)` stops it. A module that throws or runs past its
   * deadline, and a check that runs past its budget (CHECK_BUDGET_MS, the step named), come back as a failure.
   */
  async check(
    draft: EnvironmentDraft,
    checkId: string,
    onProgress: (line: string) => unknown = () => {},
    policy?: CheckPolicy,
  ): Promise<EnvironmentCheck> {
    const controller = new AbortController();
    this.checks.get(checkId)?.abort();
    this.checks.set(checkId, controller);
    // Closed when the check ends, even while a step the budget cut short still waits (that stops the module's thread).
    let built = null as { env: Environment; close(): void; source: EnvironmentSource; hosted?: boolean } | null;
    const report = (line: string) => void onProgress(line);
    try {
      // One budget for the whole check, the load included (check-budget.ts); its timeout names the step.
      return await withCheckBudget(
        undefined,
        { signal: controller.signal, onStep: (step) => report(`${step}…`) },
        async (budget) => {
          budget.begin('loading the environment');
          built = await budget.open(build(draft));
          const info = describe(built.env);
          // Where the module's code runs: its own thread where the engine can block on shared memory (module-host.ts).
          const thread =
            built.hosted === undefined
              ? ''
              : built.hosted
                ? '; runs in a thread of its own'
                : "; runs in the engine's thread (this page is not cross-origin isolated)";
          report(
            `loaded ${info.name}: levels ${info.levels.join(', ')}${info.tools.length ? `; tools ${info.tools.join(', ')}` : ''}${thread}`,
          );
          const audit = await auditEnvironment(built.env, { items: CHECK_ITEMS, budget, onProgress: report, policy });
          budget.check();
          return { ok: true as const, source: built.source, info, audit };
        },
      );
    } catch (error) {
      if (controller.signal.aborted) return { ok: false, problems: ['the check was cancelled'], line: null };
      return failure(error);
    } finally {
      built?.close();
      if (this.checks.get(checkId) === controller) this.checks.delete(checkId);
    }
  }

  cancelCheck(checkId: string): void {
    this.checks.get(checkId)?.abort();
  }

  /**
   * An imported file as a source (envs/sources.ts): a task file (.jsonl, .csv, .tsv, .parquet, .json) read
   * and built, its environment named after the file; a module loaded for its name. Throws naming each problem.
   */
  async readFile(content: Uint8Array | string, fileName: string): Promise<EnvironmentSource> {
    return environmentSourceFromFile(content, fileName);
  }

  /** Installs saved environments in this thread (once per content); each comes back with the error that kept it out, or null. */
  async install(list: EnvironmentSource[]): Promise<{ name: string; error: string | null }[]> {
    const results: { name: string; error: string | null }[] = [];
    for (const source of list) {
      try {
        await installEnvironmentSource(source);
        results.push({ name: source.name, error: null });
      } catch (error) {
        results.push({ name: source.name, error: failure(error).problems.join('; ') });
      }
    }
    return results;
  }

  /** Every environment this thread knows: the built-ins and the installed user environments. */
  describe(): EngineEnvironmentInfo[] {
    return listEnvironments().map(describe);
  }

  generateTask(env: string, seed: number, level: number, split: Split): Task {
    return getEnvironment(env).generate(seed, level, split);
  }

  /** The environment's own score of an episode (the Playground's judging of a user environment). */
  async evaluate(task: Task, trajectory: Trajectory): Promise<number | null> {
    return getEnvironment(task.env).evaluate(task, trajectory);
  }
}

async function build(
  draft: EnvironmentDraft,
): Promise<{ env: Environment; close(): void; source: EnvironmentSource; hosted?: boolean }> {
  let built: { env: Environment; close(): void; hosted?: boolean };
  let source: EnvironmentSource;
  if (draft.kind === 'module') {
    if (draft.source.trim() === '')
      throw new EnvironmentModuleError(
        [
          'the module is empty: write `export default { name, description, tags, sample, evaluate }` (Load example shows a complete one)',
        ],
        null,
      );
    built = await loadEnvironmentModule(draft.source, { fileName: draft.file?.split(/[\\/]/).pop() ?? 'env.js' });
    source = { kind: 'module', name: built.env.name, source: draft.source, file: draft.file };
  } else {
    built = await buildEnvironment(draft);
    source = draft;
  }
  if (isBuiltinEnvironment(built.env.name)) {
    built.close();
    throw new EnvironmentModuleError(
      [`"${built.env.name}" is the name of a built-in environment; give yours another name`],
      null,
    );
  }
  return { ...built, source };
}

function describe(env: Environment): EngineEnvironmentInfo {
  return {
    name: env.name,
    description: env.description,
    tags: [...env.tags],
    levels: [...env.difficulties],
    tools: [...env.ownTools.map((t) => t.name), ...env.requiredTools],
    expert: typeof env.expert === 'function',
    builtin: isBuiltinEnvironment(env.name),
  };
}

/** An error as problems and a line: a module's problems keep theirs; a guest's runtime error its line. */
function failure(error: unknown): EnvironmentFailure {
  if (error instanceof EnvironmentModuleError) return { ok: false, problems: error.problems, line: error.line };
  if (error instanceof GuestModuleError) return { ok: false, problems: [error.message], line: error.line };
  const problems = (error as { problems?: unknown })?.problems;
  if (Array.isArray(problems) && problems.every((p) => typeof p === 'string') && problems.length)
    return { ok: false, problems, line: null };
  return { ok: false, problems: [error instanceof Error ? error.message : String(error)], line: null };
}
