/**
 * A user's JavaScript module kept loaded in a QuickJS context of its own, so the host can call its
 * exported functions many times (an environment's `sample`, its tools' `run` with per-episode state,
 * its `evaluate`). runJs (quickjs.ts) is for one-shot scripts; this is for code that owns state
 * across calls.
 *
 * Contained, like runJs: the guest sees only the ECMAScript built-ins, a console whose lines are kept
 * (bounded) for the caller, and the host functions a call passes in. Every call, the load included,
 * runs under a deadline on the guest's running time (guest-clock.ts) with a wall-clock backstop, in a
 * runtime with its own heap limit and guest stack limit. Values cross as JSON, parsed on the host with
 * a size cap; the guest's JSON functions are read before the module runs, so a module that replaces
 * JSON.stringify cannot feed the host anything but its own results. Errors carry the module's line.
 *
 * Not contained, as for runJs: the host thread itself (run this inside a worker the host can
 * terminate where a hang matters) and host functions passed in, which must be bounded.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import { GuestClock } from './guest-clock.ts';
import { loadQuickJS, MAX_STACK_BYTES } from './quickjs.ts';

export interface GuestModuleOptions {
  /** Shown in errors and stack lines (`env.js:12`). */
  fileName?: string;
  /** Deadline for loading the module and, unless a call gives its own, for each call. */
  timeoutMs?: number;
  /** The module's QuickJS heap limit, in bytes. */
  memoryBytes?: number;
  /** Cap on a result's JSON, in characters. */
  maxResultChars?: number;
  /** A script run before the module (as `prelude.js`, so the module's own line is the one errors name): built-ins to replace. */
  prelude?: string;
}

/** A guest failure: the message names the call, and `line` the module line when the guest's stack has it. */
export class GuestModuleError extends Error {
  /** What the guest said (`Error: no room named attic`), without the call's name or the line. */
  readonly detail: string;
  constructor(
    message: string,
    readonly line: number | null,
    readonly timedOut = false,
    detail?: string,
  ) {
    super(message);
    this.detail = detail ?? message;
    this.name = 'GuestModuleError';
  }
}

/** Stands for the module's kept state in a call's arguments (see `keep`). */
export const STATE = Symbol('guest state');
/** A call argument: a JSON value, STATE, a host function, or an object of host functions. */
export type GuestArg = unknown;

/** A synchronous host function handed to the guest for one call (an rng's `next`). */
export type HostFn = (...args: unknown[]) => unknown;

const DEFAULTS = {
  fileName: 'module.js',
  timeoutMs: 2000,
  memoryBytes: 16 * 1024 * 1024,
  maxResultChars: 1_000_000,
  prelude: '',
};
const MAX_LOG_CHARS = 4000;
const JSON_PRELUDE = '({ parse: JSON.parse, stringify: JSON.stringify })';

export class GuestModule {
  private clock = new GuestClock(1);
  private logs: string[] = [];
  private logChars = 0;
  private state: QuickJSHandle | null = null;
  private disposed = false;

  private constructor(
    private readonly runtime: QuickJSRuntime,
    private readonly ctx: QuickJSContext,
    private readonly json: { parse: QuickJSHandle; stringify: QuickJSHandle },
    private exports: QuickJSHandle | null,
    private readonly options: typeof DEFAULTS,
  ) {}

  /** Loads `source` as an ES module; a syntax error or a throw at load time is a GuestModuleError at its line. */
  static async open(source: string, options: GuestModuleOptions = {}): Promise<GuestModule> {
    const o = { ...DEFAULTS, ...options };
    const quickjs = await loadQuickJS(2 * o.memoryBytes + 48 * 1024 * 1024);
    const runtime = quickjs.newRuntime();
    runtime.setMemoryLimit(o.memoryBytes);
    runtime.setMaxStackSize(MAX_STACK_BYTES);
    const ctx = runtime.newContext();
    const prelude = ctx.unwrapResult(ctx.evalCode(JSON_PRELUDE, 'prelude.js'));
    const json = { parse: ctx.getProp(prelude, 'parse'), stringify: ctx.getProp(prelude, 'stringify') };
    prelude.dispose();
    const module = new GuestModule(runtime, ctx, json, null, o);
    runtime.setInterruptHandler(() => module.clock.expired());
    module.installConsole();
    if (o.prelude) ctx.unwrapResult(ctx.evalCode(o.prelude, 'prelude.js')).dispose();
    // Loading runs under the module's own deadline (the constructor's clock is only a placeholder).
    module.clock = new GuestClock(o.timeoutMs);
    try {
      module.exports = module.settle(
        ctx.evalCode(source, o.fileName, { type: 'module' }),
        'loading the module',
        o.timeoutMs,
      );
    } catch (e) {
      module.dispose();
      throw e;
    }
    return module;
  }

  /** The module's exports (or `path` inside them) as JSON, functions as `"[function]"`. */
  describe(path: string[] = []): unknown {
    return this.withTarget(path, 'describe', this.options.timeoutMs, (target) => {
      // The JSON.stringify read before the module ran, with a replacer that marks functions.
      const replacer = this.ctx.unwrapResult(
        this.ctx.evalCode('(k, x) => (typeof x === "function" ? "[function]" : x)'),
      );
      try {
        const text = this.ctx.callFunction(this.json.stringify, this.ctx.undefined, target, replacer);
        if (text.error) throw this.guestError(text.error, `describing ${path.join('.') || 'the exports'}`);
        try {
          return this.ctx.typeof(text.value) === 'string' ? JSON.parse(this.ctx.getString(text.value)) : undefined;
        } finally {
          text.value.dispose();
        }
      } finally {
        replacer.dispose();
      }
    });
  }

  /** True when `path` names something (not undefined) in the exports. */
  exists(path: string[]): boolean {
    this.clock = new GuestClock(this.options.timeoutMs);
    const handle = this.lookup(path);
    handle?.dispose();
    return handle !== null;
  }

  /** True when `path` names a function in the exports. */
  hasFunction(path: string[]): boolean {
    this.clock = new GuestClock(this.options.timeoutMs);
    const handle = this.lookup(path);
    if (!handle) return false;
    try {
      return this.ctx.typeof(handle) === 'function';
    } finally {
      handle.dispose();
    }
  }

  /**
   * Calls the exported function at `path` (with the object holding it as `this`). Arguments are JSON
   * values, STATE (the kept state) or host functions; the result comes back as JSON (a promise is
   * settled first). Throws GuestModuleError on a guest throw, a timeout or a result that is not JSON.
   */
  call(path: string[], args: GuestArg[], timeoutMs = this.options.timeoutMs): unknown {
    const handle = this.invoke(path, args, timeoutMs);
    try {
      return this.toHost(handle);
    } finally {
      handle.dispose();
    }
  }

  /** Like `call`, but keeps the result in the guest as the state STATE stands for. */
  keep(path: string[], args: GuestArg[], timeoutMs = this.options.timeoutMs): void {
    const handle = this.invoke(path, args, timeoutMs);
    this.state?.dispose();
    this.state = handle;
  }

  /** Keeps a JSON value as the state STATE stands for (a module without `init`). */
  keepValue(value: unknown): void {
    this.state?.dispose();
    this.state = this.toGuest(value);
  }

  /** Console lines written since the last call to `takeLogs`. */
  takeLogs(): string[] {
    const lines = this.logs;
    this.logs = [];
    this.logChars = 0;
    return lines;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      this.state?.dispose();
      this.exports?.dispose();
      this.json.parse.dispose();
      this.json.stringify.dispose();
      this.ctx.dispose();
      this.runtime.dispose();
    } catch {
      // The wasm aborted earlier: its memory goes with the module.
    }
  }

  private invoke(path: string[], args: GuestArg[], timeoutMs: number): QuickJSHandle {
    const name = path.join('.');
    return this.withTarget(path.slice(0, -1), name, timeoutMs, (holder) => {
      const fn = this.ctx.getProp(holder, path[path.length - 1]);
      const owned: QuickJSHandle[] = [fn];
      try {
        if (this.ctx.typeof(fn) !== 'function')
          throw new GuestModuleError(`${name} is not a function in the module's exports`, null);
        const guestArgs = args.map((a) => {
          if (a === STATE) return this.state ?? this.ctx.undefined;
          const h =
            typeof a === 'function'
              ? this.hostFunction(a as HostFn)
              : isHostObject(a)
                ? this.hostObject(a)
                : this.toGuest(a);
          owned.push(h);
          return h;
        });
        return this.settle(this.ctx.callFunction(fn, holder, ...guestArgs), name, timeoutMs);
      } finally {
        for (const h of owned) if (h.alive) h.dispose();
      }
    });
  }

  /** Runs `body` on the handle at `path` under a fresh deadline. */
  private withTarget<T>(path: string[], what: string, timeoutMs: number, body: (target: QuickJSHandle) => T): T {
    if (this.disposed) throw new GuestModuleError(`${what}: the module was disposed`, null);
    this.clock = new GuestClock(timeoutMs);
    const target = this.lookup(path);
    if (!target) throw new GuestModuleError(`${path.join('.')} is missing from the module's exports`, null);
    try {
      return body(target);
    } catch (e) {
      if (e instanceof GuestModuleError) throw e;
      throw new GuestModuleError(`${what}: ${e instanceof Error ? e.message : String(e)}`, null);
    } finally {
      target.dispose();
    }
  }

  /** The handle at `path` in the exports (a new handle the caller disposes), or null. */
  private lookup(path: string[]): QuickJSHandle | null {
    if (!this.exports) return null;
    let current: QuickJSHandle = this.exports.dup();
    for (const key of path) {
      if (this.ctx.typeof(current) !== 'object' && this.ctx.typeof(current) !== 'function') {
        current.dispose();
        return null;
      }
      const next = this.ctx.getProp(current, key);
      current.dispose();
      if (this.ctx.typeof(next) === 'undefined') {
        next.dispose();
        return null;
      }
      current = next;
    }
    return current;
  }

  /** The settled value of a call or module load; promises run their jobs until settled or the deadline. */
  private settle(result: ReturnType<QuickJSContext['callFunction']>, what: string, timeoutMs: number): QuickJSHandle {
    if (result.error) throw this.guestError(result.error, what, timeoutMs);
    const first = this.ctx.getPromiseState(result.value);
    if (first.type === 'fulfilled' && first.notAPromise) return this.inTime(result.value, what, timeoutMs);
    if (first.type === 'fulfilled') first.value.dispose();
    else if (first.type === 'rejected') first.error.dispose();
    try {
      for (;;) {
        const state = this.ctx.getPromiseState(result.value);
        if (state.type === 'fulfilled') return this.inTime(state.value, what, timeoutMs);
        if (state.type === 'rejected') throw this.guestError(state.error, what, timeoutMs);
        if (this.clock.expired())
          throw new GuestModuleError(`${what}: timeout after ${timeoutMs} ms of running time`, null, true);
        const jobs = this.runtime.executePendingJobs(256);
        if (jobs.error) throw this.guestError(jobs.error, what, timeoutMs);
        if (jobs.value === 0 && this.ctx.getPromiseState(result.value).type === 'pending') {
          throw new GuestModuleError(`${what}: the promise never settled (the sandbox has no timers or I/O)`, null);
        }
      }
    } finally {
      result.value.dispose();
    }
  }

  /** `value`, unless the deadline passed: a last built-in that ran past it reached no interrupt check after it. */
  private inTime(value: QuickJSHandle, what: string, timeoutMs: number): QuickJSHandle {
    if (!this.clock.expired()) return value;
    value.dispose();
    throw new GuestModuleError(`${what}: timeout after ${timeoutMs} ms of running time`, null, true);
  }

  private guestError(handle: QuickJSHandle, what: string, timeoutMs = this.options.timeoutMs): GuestModuleError {
    const timedOut = this.clock.expired();
    let dumped: { text: string; stack: string };
    try {
      dumped =
        this.ctx.typeof(handle) === 'object'
          ? this.errorParts(handle)
          : { text: String(this.ctx.dump(handle)), stack: '' };
    } finally {
      handle.dispose();
    }
    const { text } = dumped;
    const match = new RegExp(`${escapeRegExp(this.options.fileName)}:(\\d+)`).exec(dumped.stack);
    const line = match ? Number(match[1]) : null;
    if (timedOut)
      return new GuestModuleError(
        `${what}: timeout after ${timeoutMs} ms of running time`,
        line,
        true,
        `timeout after ${timeoutMs} ms`,
      );
    if (/out of memory/i.test(text) || text === 'null') {
      const detail = `out of memory (the ${this.options.memoryBytes >> 20} MiB heap limit)`;
      return new GuestModuleError(`${what}: ${detail}`, line, false, detail);
    }
    return new GuestModuleError(
      `${what}: ${text}${line !== null ? ` (${this.options.fileName}:${line})` : ''}`,
      line,
      false,
      text,
    );
  }

  /** An error's `Name: message` and stack, read as plain strings only (no getters run on the host's behalf). */
  private errorParts(handle: QuickJSHandle): { text: string; stack: string } {
    const read = (key: string): string => {
      const h = this.ctx.getProp(handle, key);
      try {
        return this.ctx.typeof(h) === 'string' ? this.ctx.getString(h).slice(0, 1000) : '';
      } finally {
        h.dispose();
      }
    };
    const name = read('name');
    const message = read('message');
    const lineNumber = this.ctx.getProp(handle, 'lineNumber');
    const lineText =
      this.ctx.typeof(lineNumber) === 'number' ? ` ${this.options.fileName}:${this.ctx.getNumber(lineNumber)}` : '';
    lineNumber.dispose();
    return {
      text: message ? `${name || 'Error'}: ${message}` : name || 'an exception',
      stack: read('stack') + lineText,
    };
  }

  private toGuest(value: unknown): QuickJSHandle {
    const text = this.ctx.newString(JSON.stringify(value) ?? 'null');
    try {
      return this.ctx.unwrapResult(this.ctx.callFunction(this.json.parse, this.ctx.undefined, text));
    } finally {
      text.dispose();
    }
  }

  /** A guest value as a host value, through the guest's original JSON.stringify (undefined stays undefined). */
  private toHost(handle: QuickJSHandle): unknown {
    if (this.ctx.typeof(handle) === 'undefined') return undefined;
    // A string crosses as it is (bounded by the heap limit), cut at the cap: its reader truncates it further.
    if (this.ctx.typeof(handle) === 'string') return this.ctx.getString(handle).slice(0, this.options.maxResultChars);
    const text = this.ctx.callFunction(this.json.stringify, this.ctx.undefined, handle);
    if (text.error) throw this.guestError(text.error, 'reading the result as JSON');
    try {
      if (this.ctx.typeof(text.value) !== 'string')
        throw new GuestModuleError('the result is not JSON (a function or a symbol?)', null);
      const json = this.ctx.getString(text.value);
      if (json.length > this.options.maxResultChars)
        throw new GuestModuleError(
          `the result is ${json.length} characters of JSON, above the ${this.options.maxResultChars} cap`,
          null,
        );
      return JSON.parse(json);
    } finally {
      text.value.dispose();
    }
  }

  private hostFunction(fn: HostFn): QuickJSHandle {
    return this.ctx.newFunction(fn.name || 'host', (...args) => {
      if (this.clock.expired()) return { error: this.ctx.newError('refused: the deadline has passed') };
      try {
        return this.toGuest(fn(...args.map((a) => this.ctx.dump(a))));
      } catch (e) {
        return { error: this.ctx.newError(e instanceof Error ? e.message : String(e)) };
      }
    });
  }

  private hostObject(fns: Record<string, HostFn>): QuickJSHandle {
    const object = this.ctx.newObject();
    for (const [key, fn] of Object.entries(fns)) {
      const h = this.hostFunction(fn);
      this.ctx.setProp(object, key, h);
      h.dispose();
    }
    return object;
  }

  /** console.log keeps string arguments (cut) and a type tag for others: formatting a guest object could run its getters. */
  private installConsole(): void {
    const log = this.ctx.newFunction('log', (...args) => {
      if (this.logChars >= MAX_LOG_CHARS || this.clock.expired()) return;
      const line = args
        .map((a) => {
          const type = this.ctx.typeof(a);
          if (type === 'string') return this.ctx.getString(a).slice(0, 500);
          if (type === 'number' || type === 'boolean') return String(this.ctx.dump(a));
          return `[${type}]`;
        })
        .join(' ');
      this.logs.push(line);
      this.logChars += line.length;
    });
    const consoleObject = this.ctx.newObject();
    for (const name of ['log', 'info', 'warn', 'error', 'debug']) this.ctx.setProp(consoleObject, name, log);
    this.ctx.setProp(this.ctx.global, 'console', consoleObject);
    consoleObject.dispose();
    log.dispose();
  }
}

/** A plain object of host functions (an rng) crosses as a guest object whose methods call the host. */
function isHostObject(value: unknown): value is Record<string, HostFn> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.values(value);
  return entries.length > 0 && entries.every((v) => typeof v === 'function');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
