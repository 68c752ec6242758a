/** `spindle envs [--tag shell]`: the registered environments (the seed's `rl_list_environments`). */
import { CliError, type Command } from '../command.ts';
import { describeEnvironments, listTags } from '../../envs/registry.ts';
import { noPositionals, stringOption } from './shared.ts';

function environmentTable(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  ')).join('\n');
}

function levels(list: number[]): string {
  const contiguous = list.every((l, i) => i === 0 || l === list[i - 1] + 1);
  return contiguous && list.length > 1 ? `${list[0]}-${list[list.length - 1]}` : list.join(',');
}

export const envs: Command = {
  name: 'envs',
  summary: 'List the environments: name, tags, difficulty levels, tools (the seed\'s rl_list_environments).',
  options: {
    tag: { type: 'string', description: 'only environments with this tag', placeholder: 'tag' },
    long: { type: 'boolean', description: 'add each environment\'s description' },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'envs');
    const tag = stringOption(values, 'tag');
    if (tag !== undefined && !listTags().includes(tag)) throw new CliError(`No environment has the tag "${tag}". Tags: ${listTags().join(', ')}.`);
    const infos = describeEnvironments({ tag });
    const header = ['name', 'tags', 'levels', 'tools', ...(values.long ? ['description'] : [])];
    const rows = infos.map((e) => [e.name, e.tags.join(','), levels(e.difficulties), e.requiredTools.join(','), ...(values.long ? [e.description] : [])]);
    ctx.out(environmentTable([header, ...rows]));
  },
};
