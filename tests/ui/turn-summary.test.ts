import { describe, expect, it } from 'vitest';
import type { TrajectoryStep } from '../../src/contracts.ts';
import { shorten, summarizeTurn } from '../../src/ui/lib/turn-summary.ts';

function step(over: Partial<TrajectoryStep['tool_call']> & { observation?: string }): TrajectoryStep {
  const { observation = '', ...call } = over;
  return {
    step_id: 0,
    turn: 0,
    thought: null,
    tool_call: { tool_name: 'calc', parameters: { expr: '2+2' }, result: '4', error: null, latency_ms: 1, ...call },
    observation,
    timestamp: 0,
  };
}

describe('summarizeTurn', () => {
  it('gives each call its name, compact arguments and the first line of its result', () => {
    const s = summarizeTurn({
      text: '<think>hm</think><tool_call>{}</tool_call>',
      steps: [step({ result: '4\nmore' })],
    });
    expect(s.calls).toEqual([{ name: 'calc', args: '2+2', result: '4', failed: false }]);
    const several = summarizeTurn({ text: '', steps: [step({ parameters: { path: 'a\nb.js', n: 2, all: true } })] });
    expect(several.calls[0].args).toBe('a b.js, 2, true');
    expect(s.text).toBe('');
  });

  it("shows a failed call's error instead of its result, marked failed", () => {
    const s = summarizeTurn({ text: '', steps: [step({ result: '', error: '\nTypeError: x is not defined\n at…' })] });
    expect(s.calls[0]).toMatchObject({ result: 'TypeError: x is not defined', failed: true });
  });

  it('shortens long arguments and results, and gives a turn without calls its prose, not its reasoning', () => {
    const long = 'a'.repeat(200);
    const s = summarizeTurn({ text: '', steps: [step({ parameters: { code: long }, result: long })] }, 20, 30);
    expect(s.calls[0].args).toHaveLength(20);
    expect(s.calls[0].args.endsWith('…')).toBe(true);
    expect(s.calls[0].result).toHaveLength(30);
    expect(summarizeTurn({ text: '<think>secret plan</think>\nThe answer is 42.\nDone.', steps: [] }).text).toBe(
      'The answer is 42.',
    );
  });

  it('leaves short text alone', () => {
    expect(shorten('abc', 3)).toBe('abc');
    expect(shorten('abcd', 3)).toBe('ab…');
  });
});
