/**
 * Faults: nothing a model writes into a tool call stalls the worker. Each payload must come back with the
 * answer, or with the error its deadline or memory cap gives (work that ran past the deadline shows as a
 * timeout, not as an answer), leave the QuickJS module's memory at its baseline, and leave the next call
 * working; one that stalled would run into the test's timeout. Speed itself is measured in bench/, not here.
 */
import { describe, expect, it } from 'vitest';
import { createToolbox, runJs } from '../../src/sandbox/index.ts';
import { quickJsMemoryBytes, WASM_BASELINE_BYTES } from '../../src/sandbox/quickjs.ts';

const DEADLINE_MS = 1000;

describe('bounded host work in the sh tool', () => {
  it('backtracking grep patterns return at once with the right answer', async () => {
    const tb = await createToolbox({
      tools: ['sh'],
      files: { 'a.txt': 'a'.repeat(36) + '\n', 'b.txt': 'a'.repeat(10_000) + '\n' },
      timeoutMs: DEADLINE_MS,
    });
    expect(await tb.call('sh', { command: "grep -c '^(a|a)*$' a.txt" })).toEqual({ result: '1', error: null });
    expect(await tb.call('sh', { command: "grep 'a*a*a*a*a*a*a*b' b.txt" })).toEqual({
      result: '',
      error: 'exit status 1',
    });
  }, 30_000);

  it('grep over more text than the deadline allows stops with a timeout, and the next call works', async () => {
    const big = ('x'.repeat(9_000) + '\n').repeat(3_000); // 27 MB: this pattern needs about a second for it
    const tb = await createToolbox({ tools: ['sh'], files: { 'big.txt': big, 'ok.txt': 'hit\n' }, timeoutMs: 50 });
    const r = await tb.call('sh', { command: "grep -c '^(x|xx)*[^x]$' big.txt" });
    expect(r.error).toMatch(/^timeout: grep stopped after \d+ lines/);
    expect(await tb.call('sh', { command: 'grep hit ok.txt' })).toEqual({ result: 'hit', error: null });
  }, 30_000);

  it('glob patterns with many stars match long names in linear time', async () => {
    const tb = await createToolbox({ tools: ['sh'], files: { ['a'.repeat(250)]: '' }, timeoutMs: DEADLINE_MS });
    expect(await tb.call('sh', { command: "find . -name '*a*a*a*a*a*a*a*a*b'" })).toEqual({ result: '', error: null });
  }, 30_000);

  it('a path deeper than PATH_MAX is refused at once; find walks the deepest allowed tree', async () => {
    // The walk of 2,001 directories, not the deadline, is what is checked: it gets a deadline a loaded machine meets.
    const tb = await createToolbox({ tools: ['sh'], timeoutMs: 20_000 });
    const tooDeep = await tb.call('sh', { command: `mkdir -p ${'d/'.repeat(10_000)}` });
    expect(tooDeep.error).toMatch(/File name too long/);
    expect((await tb.call('sh', { command: 'find / -type d' })).result).toBe('/'); // nothing was half-created
    expect((await tb.call('sh', { command: `mkdir -p ${'d/'.repeat(2_000)}` })).error).toBeNull();
    const walk = await tb.call('sh', { command: 'find / -type d | wc -l' });
    expect(walk).toEqual({ result: '2001', error: null });
  }, 60_000);
});

describe('bounded js calls', () => {
  const hostile: Record<string, string> = {
    'self-rescheduling promise chains':
      '(async () => { for (let i = 0; i < 20000; i++) { const f = () => Promise.resolve().then(f); f(); } await new Promise(() => {}); })()',
    'an endless microtask loop': '(async () => { for (;;) await null; })()',
    'console.log of a 4 MB string in a loop': 'const s = "x".repeat(4 << 20); for (;;) console.log(s);',
    'ArrayBuffers past the heap limit': 'const a = []; for (;;) a.push(new Uint8Array(1 << 20));',
    'many small typed arrays': 'const a = []; for (;;) a.push(new Float64Array(1024));',
    'an array bomb': 'const a = []; for (;;) a.push([1, 2, 3, 4]);',
  };
  for (const [what, code] of Object.entries(hostile)) {
    it(`${what}: stopped within the deadline, memory back at baseline, next call fine`, async () => {
      const r = await runJs(code, { timeoutMs: DEADLINE_MS });
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/^(timeout|out of memory)/);
      expect(await quickJsMemoryBytes()).toBe(WASM_BASELINE_BYTES);
      expect(await runJs('[1, 2].map((x) => x * 3).join()')).toMatchObject({ ok: true, value: '"3,6"' });
    }, 30_000);
  }

  it('console output past the cap is counted, not carried', async () => {
    const r = await runJs('console.log("x".repeat(1 << 20)); console.log("after"); 1', { maxOutputBytes: 100 });
    expect(r.ok).toBe(true);
    expect(r.stdout.length).toBeLessThan(200);
    expect(r.stdout).toMatch(/output truncated: \d{7} more bytes/);
  });
});

describe('errors say what happened', () => {
  it('throw null is a thrown null, not an out-of-memory', async () => {
    expect(await runJs('throw null')).toMatchObject({
      ok: false,
      memoryExceeded: false,
      error: 'uncaught exception: null (the script threw null)',
    });
    expect(await runJs('(async () => { throw null })()')).toMatchObject({
      memoryExceeded: false,
      error: expect.stringMatching(/threw null/),
    });
  });

  it('a thrown object whose getters never return is reported as undescribable, not as out-of-memory', async () => {
    const r = await runJs('throw { get name() { for (;;) {} }, get message() { for (;;) {} } }', {
      timeoutMs: DEADLINE_MS,
    });
    expect(r).toMatchObject({ ok: false, memoryExceeded: false, timedOut: false });
    expect(r.error).toMatch(/could not be described/);
  });

  it('console.log of objects whose getters loop cannot outrun the deadline', async () => {
    // Each getter runs until interrupted; the loop around console.log used to return normally after many deadlines.
    const code =
      'const o = { get a() { for (let i = 0; i < 1e6; i++); return 1; } }; for (let i = 0; i < 1e5; i++) console.log(o); "finished"';
    const r = await runJs(code, { timeoutMs: DEADLINE_MS, maxOutputBytes: 64 });
    expect(r).toMatchObject({ ok: false, timedOut: true, error: expect.stringMatching(/^timeout/) });
  });

  it('an out-of-memory is still reported as one', async () => {
    const r = await runJs('function f() { const a = []; for (;;) a.push(new Array(64).fill(0)); } f()', {
      memoryBytes: 1 << 20,
      timeoutMs: 10_000,
    });
    expect(r).toMatchObject({ ok: false, memoryExceeded: true, error: expect.stringMatching(/^out of memory/) });
  });
});
