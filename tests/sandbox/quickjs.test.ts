/**
 * One adversarial property per test. After each hostile script the host must be intact and the next
 * call must behave normally (checked by `expectHealthy`).
 */
import { describe, expect, it } from 'vitest';
import { runJs, MAX_STACK_BYTES } from '../../src/sandbox/index.ts';

async function expectHealthy(): Promise<void> {
  // The host's own built-ins are untouched…
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Array.prototype.map.name).toBe('map');
  expect(JSON.stringify([1])).toBe('[1]');
  // …and a fresh call sees a pristine guest.
  const next = await runJs('typeof polluted + "," + typeof leaked + "," + [1, 2].map((x) => x * 2).join("+")');
  expect(next).toMatchObject({ ok: true, value: '"undefined,undefined,2+4"', error: null });
}

describe('runJs basics', () => {
  it('returns the completion value formatted and captures console output', async () => {
    const r = await runJs('console.log("sum", 1 + 2, {a: [1]}); ({x: 1, s: "t", u: undefined, f() {}})');
    expect(r).toEqual({
      ok: true,
      value: '{"x":1,"s":"t","u":undefined,"f":[Function: f]}',
      stdout: 'sum 3 {"a":[1]}\n',
      error: null,
      timedOut: false,
      memoryExceeded: false,
    });
  });

  it('reports a thrown error with its name and message', async () => {
    const r = await runJs('null.x');
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/^TypeError: /);
  });

  it('settles a promise result (async IIFE)', async () => {
    expect(await runJs('(async () => { await null; return 6 * 7; })()')).toMatchObject({ ok: true, value: '42' });
    expect(await runJs('(async () => { throw new RangeError("no") })()')).toMatchObject({
      ok: false,
      error: 'RangeError: no',
    });
    // Already settled when evaluation ends: its extra handle must be freed or QuickJS aborts the module.
    expect(await runJs('Promise.reject(new Error("early"))')).toMatchObject({ ok: false, error: 'Error: early' });
    expect(await runJs('Promise.resolve([1])')).toMatchObject({ ok: true, value: '[1]' });
  });

  it('calls host functions with plain values and turns host throws into guest exceptions', async () => {
    const globals = {
      add: (a: unknown, b: unknown) => (a as number) + (b as number),
      pair: (s: unknown) => ({ s, n: String(s).length }),
      boom: () => {
        throw new Error('host says no');
      },
    };
    expect(await runJs('add(2, 3) + pair("abc").n', { globals })).toMatchObject({ ok: true, value: '8' });
    expect(await runJs('try { boom() } catch (e) { "caught " + e.message }', { globals })).toMatchObject({
      value: '"caught host says no"',
    });
  });

  it('refuses a stack limit above 128 KiB (it could overflow the host stack)', async () => {
    await expect(runJs('1', { stackBytes: MAX_STACK_BYTES * 2 })).rejects.toThrow(/stackBytes/);
  });
});

describe('runJs adversarial properties', () => {
  it('stops an infinite loop at its deadline', async () => {
    const r = await runJs('while (true) {}', { timeoutMs: 150 });
    expect(r).toMatchObject({ ok: false, timedOut: true, memoryExceeded: false });
    expect(r.error).toMatch(/timeout/);
    await expectHealthy();
  });

  it('fails a memory bomb cleanly at the memory limit', async () => {
    const r = await runJs('const a = []; while (true) a.push({ x: 1, y: [1, 2, 3] });', {
      memoryBytes: 1 << 20,
      timeoutMs: 10_000,
    });
    expect(r).toMatchObject({ ok: false, memoryExceeded: true, timedOut: false });
    expect(r.error).toMatch(/out of memory/);
    await expectHealthy();
  });

  it('fails a memory bomb inside a function (null error value) cleanly', async () => {
    const r = await runJs('function f() { const a = []; for (;;) a.push(new Array(64).fill(0)); } f()', {
      memoryBytes: 1 << 20,
      timeoutMs: 10_000,
    });
    expect(r).toMatchObject({ ok: false, memoryExceeded: true });
    await expectHealthy();
  });

  it('fails a string-doubling bomb cleanly', async () => {
    const r = await runJs('let s = "x"; while (true) s += s;', { memoryBytes: 4 << 20, timeoutMs: 10_000 });
    expect(r.ok).toBe(false);
    expect(r.timedOut).toBe(false);
    expect(r.error).toMatch(/string too long|out of memory/);
    await expectHealthy();
  });

  it('catches deep recursion at the guest stack limit', async () => {
    const r = await runJs('function f(n) { return f(n + 1) + 1; } f(0)');
    expect(r).toMatchObject({ ok: false, timedOut: false });
    expect(r.error).toMatch(/stack overflow|Maximum call stack/i);
    await expectHealthy();
  });

  it('exposes no network, process, module loader or page globals', async () => {
    const names = [
      'fetch',
      'XMLHttpRequest',
      'WebSocket',
      'process',
      'require',
      'module',
      'window',
      'document',
      'localStorage',
      'indexedDB',
      'importScripts',
      'setTimeout',
      'Deno',
      'Bun',
    ];
    const r = await runJs(`[${names.map((n) => `typeof ${n}`).join(',')}]`);
    expect(r.ok).toBe(true);
    expect(JSON.parse(r.value!)).toEqual(names.map(() => 'undefined'));
    expect((await runJs('import("fs")')).ok).toBe(false);
  });

  it('globalThis tampering does not leak into the next call or the host', async () => {
    const r = await runJs(
      'globalThis.leaked = 1; globalThis.JSON = null; Math.max = () => 0; Object.defineProperty(globalThis, "Array", { value: 1 }); "done"',
    );
    expect(r).toMatchObject({ ok: true, value: '"done"' });
    expect(await runJs('typeof JSON.stringify + Math.max(1, 2) + typeof Array.isArray')).toMatchObject({
      value: '"function2function"',
    });
    expect((globalThis as Record<string, unknown>).leaked).toBeUndefined();
    await expectHealthy();
  });

  it('Object.prototype pollution does not leak across calls or to the host', async () => {
    const r = await runJs('Object.prototype.polluted = "yes"; Array.prototype.map = () => "hijacked"; ({}).polluted');
    expect(r).toMatchObject({ ok: true, value: '"yes"' });
    await expectHealthy();
  });

  it('tampering with built-ins cannot break how the result is formatted', async () => {
    const r = await runJs(
      'Array.prototype.join = () => { throw 1 }; JSON.stringify = () => "lie"; Object.keys = () => []; ({ a: [1, 2] })',
    );
    expect(r).toMatchObject({ ok: true, value: '{"a":[1,2]}' });
  });

  it("the object formatter's realm is out of user code's reach: no call changes how a later one is shown", async () => {
    // While the object is formatted, getters and a Proxy's traps tamper with the realm of everything they are handed.
    const probe = `const tamperRealmOf = (o) => {
        const g = o.constructor.constructor('return this')();
        g.Array.prototype.join = () => 'lie'; g.Object.keys = () => []; g.JSON.stringify = () => 'lie';
        g.Object.prototype.toString = () => '[object Error]';
        return 1;
      };
      const spy = new Proxy({}, {
        ownKeys(...args) { tamperRealmOf(args); return ['x']; },
        get(target) { return tamperRealmOf(target) + 1; },
        getOwnPropertyDescriptor() { return { value: 0, enumerable: true, configurable: true }; },
      });
      ({ get first() { return tamperRealmOf(this); }, spy, after: [1, { e: new TypeError('t') }] })`;
    const shown = '{"first":1,"spy":{"x":2},"after":[1,{"e":TypeError: t}]}';
    expect((await runJs(probe)).value).toBe(shown);
    expect((await runJs(probe)).value).toBe(shown);
    expect((await runJs('({ b: [3, new RangeError("r")] })')).value).toBe('{"b":[3,RangeError: r]}');
  });

  it('cuts long strings in the guest with the built-ins it read first, as a value and as console output', async () => {
    const r = await runJs(
      'String.prototype.slice = () => "lie"; JSON.stringify = () => "lie"; console.log("x".repeat(100000), 7); "y".repeat(5000)',
      { maxValueChars: 100, maxOutputBytes: 50 },
    );
    expect(r.ok).toBe(true);
    expect(r.value).toBe(`"${'y'.repeat(99)}...[truncated]`);
    expect(r.stdout.startsWith('x'.repeat(50))).toBe(true);
    // The rest of the line is counted as dropped: 100,000 x's, a space, "7" and the newline, less the 50 kept.
    expect(r.stdout).toMatch(/\.\.\.\[output truncated: 99953 more bytes\]$/);
    expect((await runJs('[1, "a", null, undefined, 2n, Symbol("s"), () => 1, new Error("e"), -0, NaN]')).value).toBe(
      '[1,"a",null,undefined,2n,Symbol(),[Function],Error: e,0,NaN]',
    );
    expect((await runJs('console.log(1, true, undefined, null, {a: 1}, "s"); 0')).stdout).toBe(
      '1 true undefined null {"a":1} s\n',
    );
  });

  it('describes what was thrown: errors by name and message, other values formatted, hostile ones safely', async () => {
    expect((await runJs('throw new TypeError("bad")')).error).toBe('TypeError: bad');
    expect((await runJs('throw { code: 7 }')).error).toBe('{"code":7}');
    expect((await runJs('throw { get name() { throw 1 }, message: "m" }')).ok).toBe(false);
    // A Proxy whose every read throws: its name and message cannot be read, its (empty) keys can.
    expect((await runJs('throw new Proxy({}, { get() { throw new Error("trap") } })')).error).toBe('{}');
  });

  it('hostile values (cycles, throwing getters, huge arrays) are formatted safely', async () => {
    const r = await runJs(
      'const o = { get bad() { throw new Error("x") }, big: new Array(1e4).fill(7) }; o.self = o; o',
      { maxValueChars: 300 },
    );
    expect(r.ok).toBe(true);
    expect(r.value).toContain('"bad":[unprintable]');
    expect(r.value).toContain('[Circular]');
    expect(r.value!.length).toBeLessThan(330);
  });

  it('truncates huge output with a marker', async () => {
    const r = await runJs('for (let i = 0; i < 5000; i++) console.log("line " + i); "end"', {
      maxOutputBytes: 1000,
      timeoutMs: 5000,
    });
    expect(r.ok).toBe(true);
    expect(r.stdout.startsWith('line 0\nline 1\n')).toBe(true);
    expect(r.stdout).toMatch(/\.\.\.\[output truncated: \d+ more bytes\]$/);
    expect(new TextEncoder().encode(r.stdout.split('\n...[output')[0]).length).toBeLessThanOrEqual(1000);
    await expectHealthy();
  });

  it('a never-settling promise is reported, not awaited forever', async () => {
    const r = await runJs('new Promise(() => {})');
    expect(r).toMatchObject({ ok: false });
    expect(r.error).toMatch(/never settled/);
  });

  it('each call gets a fresh context: state set in one call is gone in the next', async () => {
    await runJs('var counter = 41; globalThis.keep = { counter }');
    expect(await runJs('typeof counter + "," + typeof keep')).toMatchObject({ value: '"undefined,undefined"' });
    // Over more calls than one runtime serves, with a tampered built-in each time.
    for (let i = 0; i < 120; i++)
      expect(
        (await runJs(`const seen = typeof globalThis.mark; globalThis.mark = ${i}; Array.prototype.push = null; seen`))
          .value,
      ).toBe('"undefined"');
  });

  it('a promise job one call left queued never runs in a later call', async () => {
    const left = await runJs('Promise.resolve().then(() => console.log("late")); 1');
    expect(left).toMatchObject({ ok: true, value: '1', stdout: '' });
    const next = await runJs('Promise.resolve(2)');
    expect(next).toMatchObject({ ok: true, value: '2', stdout: '' });
  });
});
