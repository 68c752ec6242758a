import { describe, expect, it } from 'vitest';
import { modelStateText } from '../../src/ui/screens/train/model-state.ts';
import { modelPhaseText } from '../../src/ui/lib/model-state.ts';

describe('modelStateText', () => {
  it('loading while the run starts, ready while it runs, says when it loads before a run, and what became of it after one', () => {
    expect(modelStateText('idle', 'models/spindle-base')).toBe('models/spindle-base (loads when a run starts)');
    expect(modelStateText('starting', 'models/spindle-base')).toBe('loading models/spindle-base…');
    for (const s of ['running', 'paused', 'stopping'] as const)
      expect(modelStateText(s, 'models/spindle-base')).toBe('models/spindle-base ready');
    for (const s of ['finished', 'stopped'] as const)
      expect(modelStateText(s, 'models/spindle-base')).toBe(
        'models/spindle-base (the run is over: its trained copy is the Playground’s policy; the next run loads the base again)',
      );
  });
});

describe('modelPhaseText', () => {
  const notes = { idle: 'loads with the first episode', failed: 'did not load' };
  it('says each phase of one model the same way on every screen', () => {
    expect(modelPhaseText('idle', 'spindle-micro', notes)).toBe('spindle-micro (loads with the first episode)');
    expect(modelPhaseText('loading', 'spindle-micro', notes)).toBe('loading spindle-micro…');
    expect(modelPhaseText('ready', 'spindle-micro', notes)).toBe('spindle-micro ready');
    expect(modelPhaseText('failed', 'spindle-micro', notes)).toBe('spindle-micro: did not load');
  });
});
