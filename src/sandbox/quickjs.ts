/**
 * QuickJS runner: evaluates untrusted JavaScript (model-written code, hidden tests) in a fresh
 * QuickJS runtime and context per call.
 *
 * Contained, per call:
 * - No network, page, DOM, storage, timers, modules or host globals: the guest sees only the ECMAScript
 *   built-ins, a `console` whose output is captured, and the host functions passed in `globals`.
 *   `fetch`, `process`, `require`, `window`, `document`, `indexedDB` do not exist in the guest.
 * - Fresh runtime + context: globalThis tampering and prototype pollution die with the call.
 * - Wall-clock deadline (interrupt handler), memory limit (a null error from out-of-memory is
 *   handled), guest stack limit (≤ 128 KiB), captured output capped with a truncation marker, and the
 *   result value formatted inside the guest into a bounded string (cycles, getters, huge arrays).
 *
 * NOT contained (run this module inside a worker the host can terminate):
 * - A host function passed in `globals` that loops or blocks: it runs on the host thread and the
 *   deadline cannot interrupt it.
 * - CPU contention: the guest runs synchronously on the calling thread until its deadline.
 * - The host stack: if `stackBytes` exceeded the host's native stack the host itself would overflow;
 *   that is why `stackBytes` above 128 KiB is refused. Should a host RangeError still escape from the
 *   wasm, the cached module is dropped and rebuilt on the next call, but the calling worker should be
 *   treated as suspect and recreated.
 * - Wasm memory growth: the guest limit bounds QuickJS's heap, but the wasm memory the module grew
 *   into is not returned to the host until the module is dropped.
 */
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import releaseSyncVariant from '@jitl/quickjs-wasmfile-release-sync';
import { GUEST_BOOTSTRAP } from './guest-bootstrap.ts';
import { OutputBuffer } from './output-buffer.ts';

/** A synchronous host function exposed to the guest. Arguments arrive as plain values (JSON-like). */
export type HostFunction = (...args: unknown[]) => unknown;

export interface RunJsOptions {
  /** Wall-clock deadline for the whole call, in ms. */
  timeoutMs?: number;
  /** QuickJS heap limit in bytes. */
  memoryBytes?: number;
  /** Guest stack limit in bytes; at most 128 KiB (see the header). */
  stackBytes?: number;
  /** Cap on captured console output in UTF-8 bytes. */
  maxOutputBytes?: number;
  /** Cap on the formatted result value, in characters. */
  maxValueChars?: number;
  /** Host functions installed as globals. Their return value must be JSON-safe; a throw becomes a guest exception. */
  globals?: Record<string, HostFunction>;
}

export interface RunJsResult {
  ok: boolean;
  /** The completion value formatted JSON-ish (`42`, `"hi"`, `[1,2]`, `undefined`); null when !ok. */
  value: string | null;
  stdout: string;
  error: string | null;
  timedOut: boolean;
  memoryExceeded: boolean;
}

export const MAX_STACK_BYTES = 128 * 1024;
export const DEFAULT_RUN_OPTIONS = {
  timeoutMs: 1000,
  memoryBytes: 16 * 1024 * 1024,
  stackBytes: MAX_STACK_BYTES,
  maxOutputBytes: 4096,
  maxValueChars: 2000,
} as const;
/** Time granted after the deadline to format the error or value (formatting runs guest code). */
const FORMAT_GRACE_MS = 50;

let modulePromise: Promise<QuickJSWASMModule> | null = null;

/** The QuickJS wasm module, loaded once (release-sync variant only, so one wasm file is bundled). */
export function loadQuickJS(): Promise<QuickJSWASMModule> {
  if (!modulePromise) {
    modulePromise = newQuickJSWASMModuleFromVariant(releaseSyncVariant);
    // A failed load is not cached: the next call tries again.
    modulePromise.catch(() => (modulePromise = null));
  }
  return modulePromise;
}

function resolveOptions(opts: RunJsOptions): Required<Omit<RunJsOptions, 'globals'>> & { globals: Record<string, HostFunction> } {
  const o = { ...DEFAULT_RUN_OPTIONS, globals: {}, ...opts };
  if (o.stackBytes > MAX_STACK_BYTES || o.stackBytes <= 0) {
    throw new RangeError(`runJs: stackBytes ${o.stackBytes} is out of range; use 1..${MAX_STACK_BYTES} (a larger guest stack can overflow the host's native stack in a browser worker)`);
  }
  for (const key of ['timeoutMs', 'memoryBytes', 'maxOutputBytes', 'maxValueChars'] as const) {
    if (!(o[key] > 0)) throw new RangeError(`runJs: ${key} must be a positive number, got ${o[key]}`);
  }
  return o;
}

function failure(error: string, extra: Partial<RunJsResult> = {}): RunJsResult {
  return { ok: false, value: null, stdout: '', error, timedOut: false, memoryExceeded: false, ...extra };
}

/**
 * Run `code` as a classic script and return its completion value. Guest errors (exceptions, timeouts,
 * out-of-memory, stack overflow) come back in the result; only invalid options throw.
 */
export async function runJs(code: string, opts: RunJsOptions = {}): Promise<RunJsResult> {
  const options = resolveOptions(opts);
  const quickjs = await loadQuickJS();
  try {
    return runInFreshContext(quickjs, code, options);
  } catch (e) {
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    if (e instanceof RangeError) {
      // The host's own stack overflowed inside the wasm: the module's state is unknown, so drop it.
      modulePromise = null;
      return failure(`host stack exhausted (${message}); the QuickJS module will be reloaded`);
    }
    // A wasm abort (e.g. a QuickJS assertion) leaves the module unusable: rebuild it on the next call.
    modulePromise = null;
    return failure(`sandbox failure: ${message}`);
  }
}

/** Plain host value → guest handle (JSON-safe values; anything else goes through JSON). */
function toGuest(ctx: QuickJSContext, parseJson: QuickJSHandle, value: unknown): QuickJSHandle {
  if (value === undefined) return ctx.undefined;
  if (value === null) return ctx.null;
  if (typeof value === 'boolean') return value ? ctx.true : ctx.false;
  if (typeof value === 'number') return ctx.newNumber(value);
  if (typeof value === 'string') return ctx.newString(value);
  if (typeof value === 'bigint') return ctx.newBigInt(value);
  const json = JSON.stringify(value) ?? 'null';
  const text = ctx.newString(json);
  try {
    return ctx.unwrapResult(ctx.callFunction(parseJson, ctx.undefined, text));
  } finally {
    text.dispose();
  }
}

function runInFreshContext(
  quickjs: QuickJSWASMModule,
  code: string,
  o: ReturnType<typeof resolveOptions>,
): RunJsResult {
  const runtime = quickjs.newRuntime();
  let deadline = Date.now() + o.timeoutMs;
  let interrupted = false;
  runtime.setMemoryLimit(o.memoryBytes);
  runtime.setMaxStackSize(o.stackBytes);
  runtime.setInterruptHandler(() => {
    if (Date.now() <= deadline) return false;
    interrupted = true;
    return true;
  });
  const ctx = runtime.newContext();
  const out = new OutputBuffer(o.maxOutputBytes);
  const handles: QuickJSHandle[] = [];
  const keep = (h: QuickJSHandle) => (handles.push(h), h);

  try {
    // Bootstrap: captures pristine built-ins before user code can tamper with them, installs console.
    const write = keep(ctx.newFunction('write', (h) => void out.write(ctx.typeof(h) === 'string' ? ctx.getString(h) : String(ctx.dump(h)))));
    const factory = ctx.evalCode(GUEST_BOOTSTRAP, 'spindle-bootstrap.js', { type: 'global', strict: true });
    if (factory.error) {
      const why = ctx.dump(factory.error);
      factory.error.dispose();
      return failure(`sandbox bootstrap failed: ${JSON.stringify(why)}`);
    }
    const helpers = keep(ctx.unwrapResult(ctx.callFunction(keep(factory.value), ctx.undefined, write)));
    const format = keep(ctx.getProp(helpers, 'format'));
    const parseJson = keep(ctx.getProp(helpers, 'parse'));

    for (const [name, fn] of Object.entries(o.globals)) {
      const guestFn = keep(
        ctx.newFunction(name, (...args) => {
          try {
            return toGuest(ctx, parseJson, fn(...args.map((a) => ctx.dump(a))));
          } catch (e) {
            return { error: ctx.newError(e instanceof Error ? e.message : String(e)) };
          }
        }),
      );
      ctx.setProp(ctx.global, name, guestFn);
    }

    const formatHandle = (h: QuickJSHandle): string | null => {
      const maxChars = keep(ctx.newNumber(o.maxValueChars));
      const r = ctx.callFunction(format, ctx.undefined, h, maxChars);
      if (r.error) {
        r.error.dispose();
        return null;
      }
      const s = ctx.typeof(r.value) === 'string' ? ctx.getString(r.value) : null;
      r.value.dispose();
      return s;
    };

    const outcome = evaluate(ctx, code);
    if ('pending' in outcome) return failure('the promise never settled (the sandbox has no timers or I/O)', { stdout: out.text() });
    const timedOut = interrupted;
    deadline = Date.now() + FORMAT_GRACE_MS;

    if ('error' in outcome) {
      const errorHandle = outcome.error;
      // QuickJS throws a bare null when it cannot even allocate the out-of-memory error.
      const described = formatHandle(errorHandle);
      const isNull = ctx.typeof(errorHandle) === 'object' && (described === 'null' || described === null);
      errorHandle.dispose();
      const memoryExceeded = isNull || /out of memory/i.test(described ?? '');
      let error: string;
      if (timedOut) error = `timeout: stopped after ${o.timeoutMs} ms (the deadline interrupted the script)`;
      else if (memoryExceeded) error = `out of memory: the script exceeded the ${formatBytes(o.memoryBytes)} heap limit`;
      else error = described ?? 'an error that could not be described';
      return { ok: false, value: null, stdout: out.text(), error, timedOut, memoryExceeded };
    }
    const value = formatHandle(outcome.value) ?? '[unprintable value]';
    outcome.value.dispose();
    return { ok: true, value, stdout: out.text(), error: null, timedOut: false, memoryExceeded: false };
  } finally {
    for (const h of handles.reverse()) if (h.alive) h.dispose();
    ctx.dispose();
    runtime.dispose();
  }
}

type Outcome = { value: QuickJSHandle } | { error: QuickJSHandle } | { pending: true };

/** Evaluate as a classic script; a promise result (async IIFE) is settled by running its jobs. */
function evaluate(ctx: QuickJSContext, code: string): Outcome {
  const result = ctx.evalCode(code, 'task.js', { type: 'global' });
  if (result.error) return { error: result.error };
  const state = ctx.getPromiseState(result.value);
  if (state.type === 'fulfilled' && state.notAPromise) return { value: result.value };
  // An already-settled promise hands out a new handle here; every handle must be freed before the
  // runtime is, or QuickJS aborts the whole wasm module.
  if (state.type === 'fulfilled') state.value.dispose();
  else if (state.type === 'rejected') state.error.dispose();
  const jobs = ctx.runtime.executePendingJobs();
  if (jobs.error) {
    result.value.dispose();
    return { error: jobs.error };
  }
  const settled = ctx.getPromiseState(result.value);
  result.value.dispose();
  if (settled.type === 'pending') return { pending: true };
  return settled.type === 'fulfilled' ? { value: settled.value } : { error: settled.error };
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) ? 1 : 0)} MiB` : `${Math.round(n / 1024)} KiB`;
}
