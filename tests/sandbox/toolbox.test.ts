import { describe, expect, it, vi } from 'vitest';
import { createToolbox, TOOL_SCHEMAS } from '../../src/sandbox/index.ts';

describe('createToolbox', () => {
  it('exposes the schemas of the requested tools only, in whitelist order', async () => {
    const tb = await createToolbox({ tools: ['js', 'calc'] });
    expect(tb.schemas).toEqual([TOOL_SCHEMAS.calc, TOOL_SCHEMAS.js]);
    expect((await tb.call('sh', { command: 'ls' })).error).toMatch(
      /unknown tool "sh"; available tools: calc \{"expression": string\}, js \{"code": string\}/,
    );
  });

  it('rejects tool names outside the whitelist with the list of valid ones', async () => {
    await expect(createToolbox({ tools: ['calc', 'python'] })).rejects.toThrow(
      /unknown tool\(s\) "python"; the whitelist is calc, js, sh, git/,
    );
  });

  it('bad arguments become an error naming the tool and its expected arguments, never a throw', async () => {
    const tb = await createToolbox({ tools: ['calc', 'js'] });
    expect(await tb.call('calc', { expr: '1+1' })).toEqual({
      result: '',
      error: 'calc: missing argument "expression"; calc expects {"expression": string}, got {"expr"}',
    });
    expect((await tb.call('js', { code: { nested: true } })).error).toMatch(
      /argument "code" must be a string; js expects \{"code": string\}/,
    );
    expect((await tb.call('calc', null as unknown as Record<string, unknown>)).error).toMatch(
      /arguments must be an object/,
    );
    expect(await tb.call('calc', { expression: 6 })).toEqual({ result: '6', error: null });
  });

  it('calc tool returns the number and explains a bad expression', async () => {
    const tb = await createToolbox({ tools: ['calc'] });
    expect(await tb.call('calc', { expression: '17 * 23' })).toEqual({ result: '391', error: null });
    expect(await tb.call('calc', { expression: '2^10' })).toEqual({
      result: '',
      error: expect.stringMatching(/^calc: .*use \*\* for powers/),
    });
  });

  it('js tool returns stdout then the value, and reports a timeout within the per-call limit', async () => {
    const tb = await createToolbox({ tools: ['js'], timeoutMs: 200 });
    expect(await tb.call('js', { code: 'console.log("hi"); [1, 2].map((x) => x * 3)' })).toEqual({
      result: 'hi\n[3,6]',
      error: null,
    });
    expect(await tb.call('js', { code: 'console.log("a")' })).toEqual({ result: 'a', error: null });
    const slow = await tb.call('js', { code: 'console.log("before"); for (;;) {}' });
    expect(slow.result).toBe('before');
    expect(slow.error).toMatch(/timeout: stopped after 200 ms/);
    // Each js call has a fresh context: nothing survives from the previous call.
    expect(await tb.call('js', { code: 'typeof globalThis.x' })).toEqual({ result: '"undefined"', error: null });
  });

  it('a busy thread does not fail calls: the wall-clock limit is a hang backstop, not the deadline', async () => {
    // The failure this guards against: 96 episodes calling js while generation kept the thread busy, and
    // every call "timed out" at deadline + 1 s of wall time while QuickJS was still loading. Here a fresh
    // module cache makes the first calls load QuickJS while a busy loop takes 1.2 s of every task turn (more than deadline + 1 s by itself).
    vi.resetModules();
    const fresh = (await import('../../src/sandbox/index.ts')) as typeof import('../../src/sandbox/index.ts');
    const boxes = await Promise.all(
      Array.from({ length: 8 }, () => fresh.createToolbox({ tools: ['js'], timeoutMs: 100 })),
    );
    let settled = false;
    const busy = (async () => {
      while (!settled) {
        await new Promise((resolve) => setImmediate(resolve));
        const until = performance.now() + 1200;
        while (performance.now() < until);
      }
    })();
    const started = performance.now();
    const results = await Promise.all(boxes.map((tb, i) => tb.call('js', { code: `${i} * 2` })));
    const wallMs = performance.now() - started;
    settled = true;
    await busy;
    expect(results).toEqual(boxes.map((_, i) => ({ result: String(i * 2), error: null })));
    // The calls really did wait longer than deadline + 1 s, so the old limit would have failed them.
    expect(wallMs).toBeGreaterThan(1100);
    // A deadline is still a deadline: running time past it stops the guest.
    expect((await boxes[0].call('js', { code: 'for (;;) {}' })).error).toMatch(/timeout: stopped after 100 ms/);
  });

  it('caps long results', async () => {
    const tb = await createToolbox({ tools: ['js'], maxResultChars: 100 });
    const r = await tb.call('js', { code: '"x".repeat(5000)' });
    expect(r.result.length).toBeLessThan(140);
    expect(r.result).toMatch(/\.\.\.\[truncated \d+ chars\]$/);
  });

  it('snapshotFiles returns the episode files without .git; dispose stops further calls', async () => {
    const tb = await createToolbox({
      tools: ['sh', 'git'],
      files: { 'a.txt': 'A\n', '/dir/b.txt': 'B\n' },
      gitRepo: true,
    });
    await tb.call('sh', { command: 'echo C > dir/c.txt' });
    expect(tb.snapshotFiles()).toEqual({ 'a.txt': 'A\n', 'dir/b.txt': 'B\n', 'dir/c.txt': 'C\n' });
    tb.dispose();
    expect((await tb.call('sh', { command: 'ls' })).error).toMatch(/disposed/);
  });

  it('episodes are isolated: two toolboxes do not share files', async () => {
    const a = await createToolbox({ tools: ['sh'] });
    const b = await createToolbox({ tools: ['sh'] });
    await a.call('sh', { command: 'echo secret > s.txt' });
    expect((await b.call('sh', { command: 'cat s.txt' })).error).toMatch(/No such file/);
  });
});
