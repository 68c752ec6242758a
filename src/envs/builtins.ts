/** The environments Spindle ships, in the order the UI lists them (easiest first). */
import { arithTool } from './arith-tool.ts';
import { clarifyTask } from './clarify-task.ts';
import { countdown } from './countdown.ts';
import { fileChain } from './file-chain.ts';
import { funcTrace } from './func-trace.ts';
import { gitRepo } from './git-repo.ts';
import { jsDebug } from './js-debug.ts';
import { letterCount } from './letter-count.ts';
import { longPlan } from './long-plan.ts';
import { orderTotal } from './order-total.ts';
import { repoFix } from './repo-fix.ts';
import { shellExec } from './shell-exec.ts';
import { textReverse } from './text-reverse.ts';
import type { EnvironmentSpec } from './types.ts';

/**
 * The shipped environments: the single-call ones first, then those whose success takes several dependent calls,
 * then the curriculum's levels 4 and 5 (clarifying an ambiguous task, work across sh, js and git, a long plan).
 */
export const BUILTIN_SPECS: readonly EnvironmentSpec[] = [
  arithTool,
  letterCount,
  textReverse,
  countdown,
  jsDebug,
  shellExec,
  gitRepo,
  fileChain,
  orderTotal,
  funcTrace,
  clarifyTask,
  repoFix,
  longPlan,
];
