/**
 * The environment operations of the Node command line (`spindle envs`, `envs add`, `envs audit`,
 * `envs remove`), kept out of the CLI so commands only parse and print: the catalog of built-in and stored environments,
 * the audit of one (sampled tasks, the expert through the sandbox, task-blind policies: rollout/env-audit.ts)
 * run in this process, and keeping or forgetting a user's environment in the store. The app does the same
 * in its engine worker (engine/environment-workshop.ts), where a user's code may run.
 */
import type { EnvironmentSource } from '../../contracts.ts';
import { describeEnvironments, getEnvironment, isBuiltinEnvironment, listTags } from '../../envs/registry.ts';
import { withCheckBudget } from '../../envs/check-budget.ts';
import { buildEnvironment } from '../../envs/sources.ts';
import { auditEnvironment, formatAudit, type AuditOptions } from '../../rollout/env-audit.ts';
import { LocalPolicy } from '../../rollout/local-policy.ts';
import type { LoadedPolicyModel } from '../engine/engine-api.ts';
import { deleteEnvironmentRecord, getEnvironmentRecord, putEnvironment, type Store } from '../../store/index.ts';
import { readEnvironmentSource, type ReadLocal } from '../platform/node-environments.ts';

/** One environment as the catalog lists it; `origin` is `built-in`, or the file (or kind) a user's came from. */
export interface CatalogEntry {
  name: string;
  description: string;
  tags: string[];
  difficulties: number[];
  /** Sandbox tools it needs and its own tools. */
  tools: string[];
  origin: string;
}

/**
 * The built-in environments and the user's stored ones, those with `tag` when given (an unknown tag is
 * refused, listing the tags). A stored environment that no longer builds is left out and reported to `onBroken`.
 */
export async function environmentCatalog(
  stored: EnvironmentSource[],
  options: { tag?: string; onBroken?: (name: string, message: string) => void } = {},
): Promise<CatalogEntry[]> {
  const own: CatalogEntry[] = [];
  for (const source of stored) {
    const built = await buildEnvironment(source).catch((e: Error) => {
      options.onBroken?.(source.name, e.message);
      return null;
    });
    if (!built) continue;
    const { env } = built;
    own.push({
      name: source.name,
      description: env.description,
      tags: [...env.tags],
      difficulties: [...env.difficulties],
      tools: [...env.requiredTools, ...env.ownTools.map((t) => t.name)],
      origin: source.file ?? source.kind,
    });
    built.close();
  }
  const { tag } = options;
  const tags = [...new Set([...listTags(), ...own.flatMap((e) => e.tags)])].sort();
  if (tag !== undefined && !tags.includes(tag))
    throw new Error(`No environment has the tag "${tag}". Tags: ${tags.join(', ')}.`);
  return [
    ...describeEnvironments({ tag }).map((e) => ({
      name: e.name,
      description: e.description,
      tags: e.tags,
      difficulties: e.difficulties,
      tools: [...e.requiredTools, ...getEnvironment(e.name).ownTools.map((t) => t.name)],
      origin: 'built-in',
    })),
    ...own.filter((e) => tag === undefined || e.tags.includes(tag)),
  ];
}

/** What an audit checks: a user's environment (`source`), a built-in (`name`), or a file (or URL) still to be read. */
export type AuditTarget = { source: EnvironmentSource } | { name: string } | { file: string; readLocal: ReadLocal };

export interface AuditOneOptions {
  items: number;
  signal?: AbortSignal;
  /** Hears each step as it starts (a line ending in "…") and each part as it finishes. */
  onProgress?: (line: string) => void;
  /** The whole check's budget, reading a file included, in ms; default CHECK_BUDGET_MS. */
  budgetMs?: number;
  /** A file's environment must not be named like a built-in (`envs add`): refused before its audit. */
  ownName?: boolean;
  /** The policy to sample on a few entry-level items (rollout/env-audit.ts), named by `label`. */
  policy?: { model: LoadedPolicyModel; items: number; label: string; maxSteps: number; maxNewTokens: number } | null;
}

/** The audit's policy probe over a loaded model, greedy, with the run's token and turn budgets. */
function policyProbe(policy: NonNullable<AuditOneOptions['policy']>): AuditOptions['policy'] {
  return {
    policy: new LocalPolicy(policy.model.model, policy.model.tokenizer),
    items: policy.items,
    label: policy.label,
    maxSteps: policy.maxSteps,
    sampling: { temperature: 0, max_new_tokens: policy.maxNewTokens },
  };
}

/**
 * Audits a target under one budget, from reading its file to the last blind policy: its report lines,
 * the problems found (none: it passed), and the source audited (null for a built-in). Throws a
 * CheckTimeoutError naming the step when the budget runs out.
 */
export async function auditOne(
  target: AuditTarget,
  options: AuditOneOptions,
): Promise<{
  env: string;
  lines: string[];
  problems: string[];
  source: EnvironmentSource | null;
  needsBootstrap: boolean;
}> {
  const onProgress = options.onProgress ?? (() => {});
  return withCheckBudget(
    options.budgetMs,
    { signal: options.signal, onStep: (step) => onProgress(`${step}…`) },
    async (budget) => {
      const source =
        'file' in target
          ? await readEnvironmentSource(target.file, { readLocal: target.readLocal, budget })
          : 'source' in target
            ? target.source
            : null;
      if (source && options.ownName) checkOwnName(source.name);
      budget.begin(source ? `building ${source.name}` : `opening ${(target as { name: string }).name}`);
      const built = source
        ? await budget.open(buildEnvironment(source))
        : { env: getEnvironment((target as { name: string }).name), close: () => {} };
      try {
        const policy = options.policy && options.policy.items > 0 ? policyProbe(options.policy) : undefined;
        const audit = await auditEnvironment(built.env, { items: options.items, budget, onProgress, policy });
        return {
          env: audit.env,
          lines: formatAudit(audit),
          problems: audit.problems,
          source,
          needsBootstrap: audit.needsBootstrap,
        };
      } finally {
        built.close();
      }
    },
  );
}

/** What `spindle envs audit NAME` audits: a built-in, else a stored environment of that name; throws when it is neither. */
export function auditTarget(
  name: string,
  stored: EnvironmentSource[],
): { source: EnvironmentSource } | { name: string } {
  if (isBuiltinEnvironment(name)) return { name };
  const source = stored.find((s) => s.name === name);
  if (!source)
    throw new Error(`"${name}" is neither a file, a built-in environment nor one added with \`spindle envs add\`.`);
  return { source };
}

/** Refuses a user's environment named like a built-in (checked before its audit, and again when kept). */
function checkOwnName(name: string): void {
  if (isBuiltinEnvironment(name)) throw new Error(`"${name}" is a built-in environment; give yours another name.`);
}

/** Keeps a user's environment (with its audit's problems) in the store; true when it replaced one of that name. */
export async function keepEnvironment(store: Store, source: EnvironmentSource, problems: string[]): Promise<boolean> {
  checkOwnName(source.name);
  const replaced = Boolean(await getEnvironmentRecord(store, source.name));
  await putEnvironment(store, source, problems);
  return replaced;
}

/** Forgets a user's environment (runs that used it keep their copy); throws when the store has none of that name. */
export async function forgetEnvironment(store: Store, name: string, where: string): Promise<void> {
  if (!(await getEnvironmentRecord(store, name)))
    throw new Error(`There is no environment "${name}" of yours in ${where}.`);
  await deleteEnvironmentRecord(store, name);
}
