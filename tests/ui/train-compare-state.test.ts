/** TrainState's view settings: another run's held-out success to compare with, and the config the charts describe. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import type { RunController, RunListener } from '../../src/pipeline/operations/events.ts';
import { TrainState, type HeldOutResult, type TrainSource } from '../../src/ui/screens/train/train.svelte.ts';

function makeState(over: Partial<TrainSource> = {}) {
  const listeners = new Set<RunListener>();
  const controller: RunController = {
    start: async () => 'run-new',
    pause: async () => {},
    resume: async () => {},
    stop: async () => {},
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  const state = new TrainState({ controller, environments: async () => ['arith_tool', 'func_trace'], ...over });
  return { state, emit: (e: Parameters<RunListener>[0]) => listeners.forEach((l) => l(e)) };
}

const earlier: HeldOutResult[] = [{ step: 0, env: 'arith_tool', successes: 16, n: 32 }];

describe('TrainState comparison', () => {
  it('lists the stored runs but the one on the charts, and loads the picked run’s held-out results', async () => {
    const { state, emit } = makeState({
      runs: async () => [
        { id: 'run-new', name: 'judged-run 2' },
        { id: 'run-old', name: 'judged-run' },
      ],
      history: async (id) => ({ metrics: [], markers: [], heldOut: id === 'run-old' ? earlier : [] }),
    });
    await state.load();
    expect(state.comparable.map((r) => r.name)).toEqual(['judged-run 2', 'judged-run']);
    await state.start();
    emit({ type: 'status', run_id: 'run-new', status: 'running' });
    expect(state.comparable.map((r) => r.id)).toEqual(['run-old']);
    await state.compareWith('run-old');
    expect(state.compare).toEqual({ name: 'judged-run', heldOut: earlier });
    expect(state.compareNote).toBeNull();
    await state.compareWith(null);
    expect(state.compare).toBeNull();
    state.dispose();
  });

  it('says why a compared run draws nothing', async () => {
    const { state } = makeState({
      runs: async () => [{ id: 'a', name: 'fresh' }],
      history: async () => ({ metrics: [], markers: [], heldOut: [] }),
    });
    await state.load();
    await state.compareWith('a');
    expect(state.compareNote).toBe('fresh has no held-out results yet.');
    const failing = makeState({
      runs: async () => [{ id: 'b', name: 'gone' }],
      history: async () => {
        throw new Error('no such run');
      },
    }).state;
    await failing.load();
    await failing.compareWith('b');
    expect(failing.compare).toBeNull();
    expect(failing.compareNote).toBe("Could not read gone's results: no such run");
    state.dispose();
    failing.dispose();
  });

  it('the charts describe the started run’s config, not later edits (KL off at its β)', async () => {
    const { state } = makeState();
    await state.load();
    expect(state.chartConfig.grpo.kl_beta).toBe(0);
    await state.start();
    state.setField('grpo.kl_beta', 0.04);
    expect(state.shown.grpo.kl_beta).toBe(0.04);
    expect(state.chartConfig.grpo.kl_beta).toBe(DEFAULT_CONFIG.grpo.kl_beta);
    state.dispose();
  });
});
