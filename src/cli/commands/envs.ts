/**
 * `spindle envs [--tag shell]`: the environments, built-in and the user's own kept in the store (the
 * seed's `rl_list_environments`). `spindle envs add FILE` checks a module or task file (it builds, the
 * audit passes) and keeps it in the store; `spindle envs audit NAME|FILE` runs the audit alone;
 * `spindle envs remove NAME` forgets one.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, type Command, type CommandContext } from '../command.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import { describeEnvironments, getEnvironment, isBuiltinEnvironment, listTags } from '../../envs/registry.ts';
import { buildEnvironment } from '../../envs/sources.ts';
import { isUrl } from '../../pipeline/environment-url.ts';
import type { EnvironmentInfo } from '../../envs/types.ts';
import { auditEnvironment, formatAudit, type EnvironmentAudit } from '../../rollout/env-audit.ts';
import { deleteEnvironmentRecord, getEnvironmentRecord, putEnvironment } from '../../store/index.ts';
import { intOption, noPositionals, storeOption, stringOption, withStore, type Values } from './shared.ts';
import { readEnvironmentFile, storedSources } from './user-envs.ts';

function environmentTable(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  ')).join('\n');
}

function levels(list: readonly number[]): string {
  const contiguous = list.every((l, i) => i === 0 || l === list[i - 1] + 1);
  return contiguous && list.length > 1 ? `${list[0]}-${list[list.length - 1]}` : list.join(',');
}

function infoOf(source: EnvironmentSource, env: { description: string; tags: readonly string[]; difficulties: readonly number[]; requiredTools: readonly string[]; ownTools: readonly { name: string }[] }): EnvironmentInfo & { origin: string } {
  return {
    name: source.name, description: env.description, tags: [...env.tags], difficulties: [...env.difficulties],
    requiredTools: [...env.requiredTools, ...env.ownTools.map((t) => t.name)], origin: source.file ?? source.kind,
  };
}

export const envs: Command = {
  name: 'envs',
  summary: 'List the environments, built-in and your own (the seed\'s rl_list_environments); see also envs add / audit / remove.',
  options: {
    tag: { type: 'string', description: 'only environments with this tag', placeholder: 'tag' },
    long: { type: 'boolean', description: 'add each environment\'s description' },
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'envs');
    const tag = stringOption(values, 'tag');
    const own: (EnvironmentInfo & { origin: string })[] = [];
    for (const source of await storedSources(ctx, values)) {
      const built = await buildEnvironment(source).catch((e: Error) => {
        ctx.err(`warning: your environment ${source.name} no longer builds: ${e.message}`);
        return null;
      });
      if (built) {
        own.push(infoOf(source, built.env));
        built.close();
      }
    }
    const tags = [...new Set([...listTags(), ...own.flatMap((e) => e.tags)])].sort();
    if (tag !== undefined && !tags.includes(tag)) throw new CliError(`No environment has the tag "${tag}". Tags: ${tags.join(', ')}.`);
    const rows = [
      ...describeEnvironments({ tag }).map((e) => ({ ...e, origin: 'built-in' })),
      ...own.filter((e) => tag === undefined || e.tags.includes(tag)),
    ];
    const header = ['name', 'tags', 'levels', 'tools', 'from', ...(values.long ? ['description'] : [])];
    const cells = rows.map((e) => [e.name, e.tags.join(','), levels(e.difficulties), e.requiredTools.join(','), e.origin, ...(values.long ? [e.description] : [])]);
    ctx.out(environmentTable([header, ...cells]));
  },
};

const auditOptions = {
  items: { type: 'string', default: '16', description: 'items per level for the expert and each task-blind policy', placeholder: 'n' },
  store: storeOption,
} as const;

async function runAudit(ctx: CommandContext, values: Values, source: EnvironmentSource | null, name: string): Promise<EnvironmentAudit> {
  const items = intOption(values, 'items') ?? 16;
  const built = source ? await buildEnvironment(source) : { env: getEnvironment(name), close: () => {} };
  try {
    const audit = await auditEnvironment(built.env, { items, signal: ctx.signal, onProgress: (line) => ctx.err(`audit: ${line}`) });
    for (const line of formatAudit(audit)) ctx.out(line);
    return audit;
  } finally {
    built.close();
  }
}

export const envsAdd: Command = {
  name: 'envs add',
  summary: 'Check your own environment (a .js module or a task file), audit it for shortcuts, and keep it in the store.',
  args: ['FILE'],
  options: {
    ...auditOptions,
    force: { type: 'boolean', description: 'keep it even when the audit finds problems' },
  },
  async run(values, positionals, ctx) {
    if (positionals.length !== 1) throw new CliError('envs add takes one file, e.g. spindle envs add examples/envs/treasure-hunt.js.', 2);
    const source = await readEnvironmentFile(ctx, positionals[0]);
    if (isBuiltinEnvironment(source.name)) throw new CliError(`"${source.name}" is a built-in environment; give yours another name.`);
    const audit = await runAudit(ctx, values, source, source.name);
    if (audit.problems.length && !values.force) {
      throw new CliError(`${source.name} was not added: the audit found ${audit.problems.length} problem(s) (above). Fix them, or add --force to keep it anyway.`);
    }
    await withStore(ctx, values, async (store) => {
      const replaced = await getEnvironmentRecord(store, source.name);
      await putEnvironment(store, source, audit.problems);
      ctx.out(`${replaced ? 'updated' : 'added'} ${source.name} (${source.kind === 'module' ? 'module' : `${source.rows.length} task rows`}) in ${store.path}; train on it with tasks.environments: [${source.name}]`);
    }, true);
  },
};

export const envsAudit: Command = {
  name: 'envs audit',
  summary: 'Audit an environment (a name, or a .js module / task file): sampled tasks, the expert through the sandbox, task-blind policies.',
  args: ['NAME|FILE'],
  options: auditOptions,
  async run(values, positionals, ctx) {
    if (positionals.length !== 1) throw new CliError('envs audit takes one environment name or file.', 2);
    const [target] = positionals;
    let source: EnvironmentSource | null = null;
    if (isUrl(target) || existsSync(resolve(ctx.cwd, target))) source = await readEnvironmentFile(ctx, target);
    else if (!isBuiltinEnvironment(target)) {
      source = (await storedSources(ctx, values)).find((s) => s.name === target) ?? null;
      if (!source) throw new CliError(`"${target}" is neither a file, a built-in environment nor one added with \`spindle envs add\`.`);
    }
    const audit = await runAudit(ctx, values, source, target);
    if (audit.problems.length) throw new CliError(`${audit.env}: ${audit.problems.length} problem(s) found.`);
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
      if (!(await getEnvironmentRecord(store, positionals[0]))) throw new CliError(`There is no environment "${positionals[0]}" of yours in ${store.path}.`);
      await deleteEnvironmentRecord(store, positionals[0]);
      ctx.out(`removed ${positionals[0]} from ${store.path}`);
    });
  },
};
