/**
 * Defaults the command line's `--help` shows, in a module that loads nothing heavy (the CLI loads the rest
 * of the pipeline only once a command runs: src/cli/pipeline.ts).
 */
export { CHECK_BUDGET_MS } from '../../envs/check-budget.ts';

/** The bootstrap flow's settings unless asked otherwise (bootstrap.ts; the CLI, the Environments screen). */
export const BOOTSTRAP_DEFAULTS = { demonstrations: 256, sftEpochs: 3, sftLearningRate: 2e-3, sftBatchSize: 8 };
