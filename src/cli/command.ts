/**
 * The shape of one CLI command and the error type commands throw for a clean one-line failure.
 */
import type { ParseArgsConfig } from 'node:util';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & {
  description: string;
  placeholder?: string;
};

export interface CommandContext {
  /** Working directory for relative paths. */
  cwd: string;
  out(line: string): void;
  err(line: string): void;
  /** True when stdout is a terminal (progress bars redraw in place). */
  interactive: boolean;
  /** Aborted on Ctrl-C: long commands checkpoint and exit. */
  signal: AbortSignal;
}

export interface Command {
  /** e.g. `envs`, `config set`, `export trajectories`. */
  name: string;
  summary: string;
  /** Positional arguments, shown in usage. */
  args?: string[];
  options: Record<string, OptionSpec>;
  run(
    values: Record<string, string | boolean | string[] | undefined>,
    positionals: string[],
    ctx: CommandContext,
  ): Promise<void>;
}

/** A failure the user can fix: printed as one line, exit code 1 (2 for usage errors). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
