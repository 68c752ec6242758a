/**
 * `spindle envs [--tag shell]`: the environments, built-in and the user's own kept in the store.
 * `spindle envs add FILE` checks a module or task file (it builds, the audit passes) and keeps it in
 * the store; `spindle envs audit NAME|FILE` runs the audit alone; `spindle envs remove NAME` forgets one.
 * The operations are pipeline/operations/environment-catalog.ts; here the table is laid out and the report printed.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, type Command, type CommandContext } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import type { AuditTarget } from '../../pipeline/operations/environment-catalog.ts';
import { CHECK_BUDGET_MS } from '../../pipeline/operations/defaults.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import {
  intOption,
  loadModel,
  modelOption,
  modelPath,
  noPositionals,
  storeOption,
  stringOption,
  withStore,
  type Values,
} from './shared.ts';
import { smallCap } from './small.ts';
import { environmentFile, storedSources } from './user-envs.ts';
import { countOf } from '../../pipeline/operations/report-text.ts';

/** Columns padded to their widest cell (the last one left as it is). */
function environmentTable(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows
    .map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  '))
    .join('\n');
}

/** Levels as a range when they are contiguous (1-5), else listed. */
function levels(list: readonly number[]): string {
  const contiguous = list.every((l, i) => i === 0 || l === list[i - 1] + 1);
  return contiguous && list.length > 1 ? `${list[0]}-${list[list.length - 1]}` : list.join(',');
}

export const envs: Command = {
  name: 'envs',
  summary: 'List the environments, built-in and your own; see also envs add / audit / remove.',
  options: {
    tag: { type: 'string', description: 'only environments with this tag', placeholder: 'tag' },
    long: { type: 'boolean', description: "add each environment's description" },
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'envs');
    const rows = await pipeline().environmentCatalog(await storedSources(ctx, values), {
      tag: stringOption(values, 'tag'),
      onBroken: (name, message) => ctx.err(`warning: your environment ${name} no longer builds: ${message}`),
    });
    const header = ['name', 'tags', 'levels', 'tools', 'from', ...(values.long ? ['description'] : [])];
    const cells = rows.map((e) => [
      e.name,
      e.tags.join(','),
      levels(e.difficulties),
      e.tools.join(','),
      e.origin,
      ...(values.long ? [e.description] : []),
    ]);
    ctx.out(environmentTable([header, ...cells]));
  },
};

const auditOptions = {
  items: {
    type: 'string',
    default: '16',
    description: 'items per level for the expert and each task-blind policy',
    placeholder: 'n',
  },
  budget: {
    type: 'string',
    default: String(CHECK_BUDGET_MS / 1000),
    placeholder: 's',
    description: 'seconds the whole check may take (reading the file, loading it, the audit)',
  },
  'policy-items': {
    type: 'string',
    default: '4',
    placeholder: 'n',
    description:
      'entry-level items to sample the policy (--model) on, greedy; when it solves none, the report says to bootstrap it (0: skip)',
  },
  model: modelOption,
  store: storeOption,
} as const;

/** Audits and prints the report; returns the problems found and the source audited. */
async function runAudit(
  ctx: CommandContext,
  values: Values,
  target: AuditTarget,
  ownName = false,
): Promise<{ env: string; problems: string[]; source: EnvironmentSource | null }> {
  const budgetMs = (intOption(values, 'budget') ?? CHECK_BUDGET_MS / 1000) * 1000;
  if (!(budgetMs > 0)) throw new CliError('--budget must be a whole number of seconds above 0.', 2);
  const items = intOption(values, 'items') ?? 16;
  const policyItems = smallCap(intOption(values, 'policy-items', 0) ?? 4, 2);
  // The policy is loaded before the check starts: its budget is for the environment's code, not the model's files.
  const model = policyItems > 0 ? await loadModel(ctx, modelPath(ctx, values, DEFAULT_CONFIG.model.base_model)) : null;
  try {
    const policy = model && {
      model,
      items: policyItems,
      label: `the policy (${stringOption(values, 'model') ?? DEFAULT_CONFIG.model.base_model})`,
      maxSteps: DEFAULT_CONFIG.trajectory_collection.max_steps_per_trajectory,
      maxNewTokens: DEFAULT_CONFIG.sampling.max_new_tokens,
    };
    const audit = await pipeline().auditOne(target, {
      items,
      signal: ctx.signal,
      budgetMs,
      ownName,
      policy,
      onProgress: (line) => ctx.err(`audit: ${line}`),
    });
    for (const line of audit.lines) ctx.out(line);
    return audit;
  } finally {
    model?.model.dispose();
  }
}

export const envsAdd: Command = {
  name: 'envs add',
  summary:
    'Check your own environment (a .js module or a task file), audit it for shortcuts, and keep it in the store.',
  args: ['FILE'],
  options: {
    ...auditOptions,
    force: { type: 'boolean', description: 'keep it even when the audit finds problems' },
  },
  async run(values, positionals, ctx) {
    if (positionals.length !== 1)
      throw new CliError('envs add takes one file, e.g. spindle envs add examples/envs/treasure-hunt.js.', 2);
    const audit = await runAudit(ctx, values, environmentFile(ctx, positionals[0]), true);
    const source = audit.source!;
    if (audit.problems.length && !values.force) {
      throw new CliError(
        `${source.name} was not added: the audit found ${countOf(audit.problems.length, 'problem')} (above). Fix them, or add --force to keep it anyway.`,
      );
    }
    await withStore(
      ctx,
      values,
      async (store) => {
        const replaced = await pipeline().keepEnvironment(store, source, audit.problems);
        ctx.out(
          `${replaced ? 'updated' : 'added'} ${source.name} (${source.kind === 'module' ? 'module' : `${source.rows.length} task rows`}) in ${store.path}; train on it with tasks.environments: [${source.name}]`,
        );
      },
      { create: true },
    );
  },
};

export const envsAudit: Command = {
  name: 'envs audit',
  summary:
    'Audit an environment (a name, or a .js module / task file): sampled tasks, the expert through the sandbox, task-blind policies.',
  args: ['NAME|FILE'],
  options: auditOptions,
  async run(values, positionals, ctx) {
    if (positionals.length !== 1) throw new CliError('envs audit takes one environment name or file.', 2);
    const [target] = positionals;
    const isFile = pipeline().isUrl(target) || existsSync(resolve(ctx.cwd, target));
    const audit = await runAudit(
      ctx,
      values,
      isFile ? environmentFile(ctx, target) : pipeline().auditTarget(target, await storedSources(ctx, values)),
    );
    if (audit.problems.length) throw new CliError(`${audit.env}: ${countOf(audit.problems.length, 'problem')} found.`);
  },
};

export const envsRemove: Command = {
  name: 'envs remove',
  summary: 'Forget one of your own environments (runs that used it keep their copy).',
  args: ['NAME'],
  options: { store: storeOption },
  async run(values, positionals, ctx) {
    if (positionals.length !== 1) throw new CliError('envs remove takes one environment name.', 2);
    await withStore(ctx, values, async (store) => {
      await pipeline().forgetEnvironment(store, positionals[0], store.path);
      ctx.out(`removed ${positionals[0]} from ${store.path}`);
    });
  },
};
