/**
 * `SPINDLE_SMALL=1`: every command does a few seconds of its work, so the README's commands can be tried
 * (and are tested, tests/cli/readme-sequence.readme.test.ts) exactly as written: runs of at most 2 updates of
 * one group of at most 8, held-out checks of 4 items, 4 collected groups, evaluations of 4 items, one SFT
 * epoch. Caps only lower what a config or flag asks for; what such a run produces means nothing.
 */
import type { RunConfig } from '../../config/schema.ts';

export const SMALL_SIZES = { updates: 2, groupSize: 8, evalItems: 4, groups: 4, epochs: 1 } as const;

/** Whether SPINDLE_SMALL=1 is set. */
export function smallSizes(): boolean {
  return process.env.SPINDLE_SMALL === '1';
}

/** `value` capped at `cap` under SPINDLE_SMALL=1 (undefined stays undefined: the command's default is capped where it is applied). */
export function smallCap(value: number, cap: number): number;
export function smallCap(value: number | undefined, cap: number): number | undefined;
export function smallCap(value: number | undefined, cap: number): number | undefined {
  return smallSizes() && value !== undefined ? Math.min(value, cap) : value;
}

/** The run config with SPINDLE_SMALL=1's caps (a copy; the config itself when it is unset). */
export function smallConfig(config: RunConfig): RunConfig {
  if (!smallSizes()) return config;
  const c = structuredClone(config);
  c.training.max_steps = Math.min(c.training.max_steps, SMALL_SIZES.updates);
  c.training.batch_size = 1;
  c.training.grad_accum_steps = 1;
  c.training.group_size = Math.min(c.training.group_size, SMALL_SIZES.groupSize);
  c.training.epochs = Math.min(c.training.epochs, SMALL_SIZES.epochs);
  c.training.eval_interval = Math.min(c.training.eval_interval, c.training.max_steps);
  c.tasks.eval_items = Math.min(c.tasks.eval_items, SMALL_SIZES.evalItems);
  c.safety.eval_items = Math.min(c.safety.eval_items, SMALL_SIZES.evalItems);
  return c;
}
