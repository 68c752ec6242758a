import { describe, expect, it } from 'vitest';
import { advanceEvaluation, evaluationText } from '../../src/ui/screens/train/evaluation-progress.ts';
import type { RunController, RunListener } from '../../src/pipeline/operations/events.ts';
import { TrainState } from '../../src/ui/screens/train/train.svelte.ts';

const at = (env: string, done: number, total = 32) => ({ step: 0, split: 'test' as const, env, done, total });

describe('advanceEvaluation', () => {
  it('counts items done of total and says nothing of time left before the first item', () => {
    const p = advanceEvaluation(null, at('arith_tool', 0), ['arith_tool'], 1000);
    expect(p.etaSeconds).toBeNull();
    expect(evaluationText(p)).toBe('held-out evaluation before the first update: arith_tool 0/32 items');
  });

  it('times the items so far for the time left, across the environments still to come', () => {
    const envs = ['arith_tool', 'json_extract'];
    let p = advanceEvaluation(null, at('arith_tool', 0), envs, 0);
    p = advanceEvaluation(p, at('arith_tool', 8), envs, 8000);
    // 1 s an item; 24 left here and 32 in json_extract.
    expect(p.etaSeconds).toBe(56);
    expect(evaluationText(p)).toBe(
      'held-out evaluation before the first update: arith_tool 8/32 items (1 of 2 environments) · about 56 s left',
    );
    p = advanceEvaluation(p, at('json_extract', 16), envs, 48_000);
    expect(p.doneBefore).toBe(32);
    expect(p.etaSeconds).toBe(16);
  });

  it('a later evaluation starts its own count and says which update it follows', () => {
    let p = advanceEvaluation(null, at('arith_tool', 32), ['arith_tool'], 0);
    p = advanceEvaluation(p, { ...at('arith_tool', 0), step: 10 }, ['arith_tool'], 5000);
    expect(p.startedAt).toBe(5000);
    expect(evaluationText(p)).toBe('held-out evaluation after update 10: arith_tool 0/32 items');
  });
});

describe('TrainState evaluation progress', () => {
  it('follows the run’s evaluation-progress events and clears once the last environment is in', async () => {
    const listeners = new Set<RunListener>();
    const controller: RunController = {
      start: async () => 'run-1',
      pause: async () => {},
      resume: async () => {},
      stop: async () => {},
      subscribe(l) {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };
    let clock = 0;
    const state = new TrainState({ controller, environments: async () => ['arith_tool', 'func_trace'] }, () => clock);
    await state.load();
    await state.start();
    const emit = (e: Parameters<RunListener>[0]) => listeners.forEach((l) => l(e));
    emit({ type: 'evaluation-progress', run_id: 'run-1', ...at('arith_tool', 0) });
    clock = 4000;
    emit({ type: 'evaluation-progress', run_id: 'run-1', ...at('arith_tool', 4) });
    expect(state.evaluation).toMatchObject({ done: 4, total: 32, etaSeconds: 28 });
    emit({ type: 'evaluation', run_id: 'run-1', step: 0, env: 'arith_tool', split: 'test', success: 0.5, n: 32 });
    expect(state.evaluation).toBeNull();
    state.dispose();
  });
});
