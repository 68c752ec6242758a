/** BootstrapState over a source whose bootstrap is scripted here: what the Bootstrap panel shows of each event and answer. */
import { describe, expect, it } from 'vitest';
import { BOOTSTRAP_CHOICE } from '../../src/pipeline/app/environments.ts';
import { BootstrapState } from '../../src/ui/screens/environments/bootstrap.svelte.ts';
import type {
  BootstrapChoice,
  BootstrapEvent,
  BootstrapReport,
  EnvironmentsSource,
} from '../../src/ui/screens/environments/source.ts';
import { demoEnvironments } from '../../src/ui/sources/demo-environments.ts';

const held = (successes: number, n: number) => ({ successes, n, interval: [0, 1] as [number, number] });

function scripted(
  events: BootstrapEvent[],
  outcome: (choice: BootstrapChoice) => BootstrapReport,
): EnvironmentsSource & { asked: BootstrapChoice[] } {
  const asked: BootstrapChoice[] = [];
  return {
    ...demoEnvironments([]),
    asked,
    async bootstrap(_name, choice, onEvent) {
      asked.push(choice);
      for (const e of events) onEvent(e);
      return outcome(choice);
    },
  };
}

const REPORT: BootstrapReport = {
  env: 'bell',
  level: 1,
  baseline: held(0, 8),
  demonstrations: { source: 'x', good: 3, total: 3, runId: 'r1' },
  sft: { losses: [1, 0.5], adapter: null, examples: 3 },
  afterSft: held(6, 8),
  grpo: null,
  stopped: false,
};

describe('BootstrapState', () => {
  it('keeps each step, one counting line per kind, and the figures in order; sends the sizes and the source', async () => {
    const source = scripted(
      [
        { type: 'stage', stage: 'baseline', line: 'held-out success' },
        { type: 'held-out', stage: 'baseline', result: held(0, 8) },
        { type: 'stage', stage: 'demonstrations', line: 'demonstrations from x' },
        { type: 'demonstration', done: 1, good: 1, total: 3 },
        { type: 'demonstration', done: 3, good: 3, total: 3 },
        { type: 'stage', stage: 'sft', line: 'SFT on 3 successful demonstrations' },
        { type: 'sft-update', done: 1, total: 2, loss: 1 },
        { type: 'sft-update', done: 2, total: 2, loss: 0.5 },
        { type: 'held-out', stage: 'after-sft', result: held(6, 8) },
      ],
      () => REPORT,
    );
    const state = new BootstrapState(source, BOOTSTRAP_CHOICE);
    expect(state.available).toBe(true);
    state.demonstrations = 3;
    state.grpoSteps = 0;
    await state.start('bell');
    expect(state.phase).toBe('done');
    expect(state.lines).toEqual([
      'held-out success',
      'demonstrations from x',
      'demonstration 3/3, 3 succeeded',
      'SFT on 3 successful demonstrations',
      'SFT update 2/2, loss 0.500',
    ]);
    expect(state.figures.map((f) => [f.stage, f.result.successes])).toEqual([
      ['baseline', 0],
      ['after-sft', 6],
    ]);
    expect(source.asked).toEqual([
      { ...BOOTSTRAP_CHOICE, source: { kind: 'expert' }, demonstrations: 3, grpoSteps: 0 },
    ]);
  });

  it('refuses a remote source without its address, and a size that is not a whole number, saying what to give', async () => {
    const source = scripted([], () => REPORT);
    const state = new BootstrapState(source, BOOTSTRAP_CHOICE);
    state.kind = 'remote';
    await state.start('bell');
    expect(state.phase).toBe('failed');
    expect(state.error).toMatch(/Give the endpoint \(e\.g\. http:\/\/127\.0\.0\.1:8000\/v1\) and the model it serves/);
    state.endpoint = 'http://127.0.0.1:9/v1';
    state.remoteModel = 'teacher';
    state.sftEpochs = 1.5;
    await state.start('bell');
    expect(state.error).toMatch(/whole numbers ≥ 1 \(got 1\.5\)/);
    state.sftEpochs = 2;
    await state.start('bell');
    expect(state.phase).toBe('done');
    expect(source.asked.at(-1)?.source).toEqual({ kind: 'remote', baseUrl: 'http://127.0.0.1:9/v1', model: 'teacher' });
  });

  it("shows the flow's own failure, and a source that cannot train offers no bootstrap", async () => {
    const failing = {
      ...demoEnvironments([]),
      bootstrap: () => Promise.reject(new Error('None of the 3 demonstrations succeeded')),
    };
    const state = new BootstrapState(failing, BOOTSTRAP_CHOICE);
    await state.start('bell');
    expect([state.phase, state.error]).toEqual(['failed', 'None of the 3 demonstrations succeeded']);
    expect(new BootstrapState(demoEnvironments([]), BOOTSTRAP_CHOICE).available).toBe(false);
  });
});
