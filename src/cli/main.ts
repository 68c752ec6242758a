/**
 * `spindle` — the command line over the same core as the app (Node, tfjs wasm backend).
 * Dispatches to the commands in ./commands, prints `--help` for each, turns errors into one line and a
 * non-zero exit code (a stack trace only with --verbose).
 */
import { parseArgs } from 'node:util';
import { CliError, type Command, type CommandContext, type OptionSpec } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { loadPipeline } from './pipeline.ts';

const GLOBAL_OPTIONS = {
  help: { type: 'boolean', short: 'h', description: 'show help for the command' },
  verbose: { type: 'boolean', description: 'print stack traces on errors' },
} as const;

export function usage(command: Command): string {
  const args = (command.args ?? []).map((a) => ` ${a}`).join('');
  const lines = [`Usage: spindle ${command.name}${args} [options]`, '', command.summary, '', 'Options:'];
  const all: Record<string, OptionSpec> = { ...command.options, ...GLOBAL_OPTIONS };
  for (const [name, spec] of Object.entries(all)) {
    const value =
      spec.type === 'string' ? ` <${'placeholder' in spec && spec.placeholder ? spec.placeholder : name}>` : '';
    const def = 'default' in spec && spec.default !== undefined ? ` (default: ${String(spec.default)})` : '';
    lines.push(`  --${name}${value}`.padEnd(34) + spec.description + def);
  }
  return lines.join('\n');
}

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 4;
  return [
    'spindle — reinforcement learning for LLM agents (the same core as the browser app)',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Run `spindle <command> --help` for the options of a command.',
  ].join('\n');
}

/** Finds the longest command name matching the leading words (`export adapter` before `export`). */
function findCommand(argv: string[]): { command: Command; rest: string[] } | null {
  for (let words = 3; words >= 1; words--) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS.find((c) => c.name === name);
    if (command) return { command, rest: argv.slice(words) };
  }
  return null;
}

export async function main(argv: string[], ctx: CommandContext): Promise<number> {
  const verbose = argv.includes('--verbose');
  if (!argv.length || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    ctx.out(overview());
    return 0;
  }
  const found = findCommand(argv);
  try {
    if (!found) {
      const group = COMMANDS.filter((c) => c.name.startsWith(argv[0] + ' '));
      if (group.length)
        throw new CliError(`"${argv[0]}" needs a subcommand: ${group.map((c) => c.name).join(', ')}.`, 2);
      throw new CliError(`Unknown command "${argv[0]}". Commands: ${COMMANDS.map((c) => c.name).join(', ')}.`, 2);
    }
    const { command, rest } = found;
    let parsed;
    try {
      parsed = parseArgs({
        args: rest,
        options: { ...command.options, ...GLOBAL_OPTIONS },
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      throw new CliError(`${(error as Error).message.split('\n')[0]} (see \`spindle ${command.name} --help\`)`, 2);
    }
    if (parsed.values.help) {
      ctx.out(usage(command));
      return 0;
    }
    await loadPipeline();
    // A Ctrl-C while the pipeline loaded (a second or more) stops here, before the command starts anything.
    if (ctx.signal.aborted) throw new CliError('interrupted during start-up; nothing was run', 130);
    await command.run(
      parsed.values as Record<string, string | boolean | string[] | undefined>,
      parsed.positionals,
      ctx,
    );
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    ctx.err(`spindle: ${message}`);
    if (verbose && error instanceof Error && error.stack) ctx.err(error.stack);
    return error instanceof CliError ? error.exitCode : 1;
  }
}
