/** The environments Spindle ships, in the order the UI lists them (easiest first). */
import { arithTool } from './arith-tool.ts';
import { countdown } from './countdown.ts';
import { fileChain } from './file-chain.ts';
import { funcTrace } from './func-trace.ts';
import { gitRepo } from './git-repo.ts';
import { jsDebug } from './js-debug.ts';
import { letterCount } from './letter-count.ts';
import { orderTotal } from './order-total.ts';
import { shellExec } from './shell-exec.ts';
import { textReverse } from './text-reverse.ts';
import type { EnvironmentSpec } from './types.ts';

/** The shipped environments: the single-call ones first, then those whose success takes several dependent calls. */
export const BUILTIN_SPECS: readonly EnvironmentSpec[] = [arithTool, letterCount, textReverse, countdown, jsDebug, shellExec, gitRepo, fileChain, orderTotal, funcTrace];
