/**
 * Long built-ins: QuickJS cannot interrupt one native operation, so a js call whose single built-in runs
 * past the deadline must still end as a timeout, never a success, and one that never ends is stopped by the
 * sandbox thread's watchdog. Each attack is followed by a call that must work (the host stays usable).
 */
import { describe, expect, it } from 'vitest';
import { createToolbox, runJs, runJsIsolated } from '../../src/sandbox/index.ts';

/**
 * A deadline short enough that each attack runs past it on any machine: every one of them is a single
 * built-in of half a second or more here, and the wall backstop (3 × 50 ms) catches one that is faster.
 */
const SHORT_MS = 50;

const attacks: Record<string, string> = {
  'eight huge BigInts joined': "Array(8).fill(7n**150000n).join('').length",
  'one BigInt near the size cap as text': 'String(7n**350000n).length',
  'three huge BigInts sorted as text': '{ const b = 7n**150000n; [b, b + 1n, b + 2n].sort().length }',
};

const timeout = { ok: false, value: null, timedOut: true, error: expect.stringMatching(/^timeout: stopped after/) };

describe('a single long built-in', () => {
  for (const [what, code] of Object.entries(attacks)) {
    it(`${what}: a timeout, never a success; the next call works`, async () => {
      expect(await runJsIsolated(code, { timeoutMs: SHORT_MS })).toMatchObject(timeout);
      expect(await runJsIsolated('6 * 7')).toMatchObject({ ok: true, value: '42' });
    }, 60_000);
  }

  it('one that ends past the deadline is a timeout in runJs itself: it is checked once more when the script ends', async () => {
    expect(await runJs('String(7n**250000n).length', { timeoutMs: SHORT_MS })).toMatchObject(timeout);
    expect(await runJs('6 * 7')).toMatchObject({ ok: true, value: '42' });
  }, 60_000);

  it('the js tool reports it as its error', async () => {
    const tb = await createToolbox({ tools: ['js'], timeoutMs: SHORT_MS });
    expect((await tb.call('js', { code: attacks['one BigInt near the size cap as text'] })).error).toMatch(
      /^timeout: stopped after/,
    );
    expect(await tb.call('js', { code: '6 * 7' })).toEqual({ result: '42', error: null });
  }, 60_000);

  it('a built-in that never ends is stopped by the watchdog with a named timeout; the next call gets a fresh thread', async () => {
    // A generic array method over an array-like of length 2**53 loops in native code, past any interrupt check.
    const r = await runJsIsolated('Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1)', {
      timeoutMs: SHORT_MS,
    });
    expect(r).toMatchObject({
      ...timeout,
      error: expect.stringMatching(/one built-in ran past the 50 ms deadline .* sandbox thread was stopped/),
    });
    expect(await runJsIsolated('[1, 2].map((x) => x * 3).join()')).toMatchObject({ ok: true, value: '"3,6"' });
  }, 60_000);

  it('a caller thread too busy to read the answer in time never turns it into a timeout', async () => {
    const call = runJsIsolated('6 * 7', { timeoutMs: 10 });
    // The watchdog is due after 2030 ms; this thread holds its event loop for longer, while the sandbox answers.
    const until = performance.now() + 3000;
    while (performance.now() < until);
    expect(await call).toMatchObject({ ok: true, value: '42' });
  }, 60_000);

  it('refuses bad options by name, as runJs does', async () => {
    await expect(runJsIsolated('1', { timeoutMs: 0 })).rejects.toThrow(/timeoutMs must be a positive number/);
    await expect(runJsIsolated('1', { stackBytes: 1 << 20 })).rejects.toThrow(/stackBytes/);
  });
});
