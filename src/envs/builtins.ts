/** The environments Spindle ships, in the order the UI lists them (easiest first). */
import { arithTool } from './arith-tool.ts';
import { countdown } from './countdown.ts';
import { gitRepo } from './git-repo.ts';
import { jsDebug } from './js-debug.ts';
import { letterCount } from './letter-count.ts';
import { shellExec } from './shell-exec.ts';
import { textReverse } from './text-reverse.ts';
import type { EnvironmentSpec } from './types.ts';

export const BUILTIN_SPECS: readonly EnvironmentSpec[] = [arithTool, letterCount, textReverse, countdown, jsDebug, shellExec, gitRepo];
