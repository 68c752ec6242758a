/**
 * QuickJS runner: evaluates untrusted JavaScript (model-written code, hidden tests) in a fresh
 * QuickJS context per call.
 *
 * Contained, per call:
 * - No network, page, DOM, storage, timers, modules or host globals: the guest sees only the ECMAScript
 *   built-ins, a `console` whose output is captured, and the host functions passed in `globals`.
 *   `fetch`, `process`, `require`, `window`, `document`, `indexedDB` do not exist in the guest.
 * - Fresh context per call (in a runtime reused only after a clean call, see RuntimeLease): globalThis
 *   tampering and prototype pollution die with the call.
 * - Deadline on the guest's running time (guest-clock.ts: time spent waiting for a core does not
 *   count, a wall-clock backstop does): the interrupt handler stops guest code; pending promise jobs run
 *   in batches between host-side deadline checks (one job can be too short to reach an interrupt);
 *   console output and host functions refuse work once the deadline has passed; the clock is read once
 *   more when the script ends, so a last built-in that ran past the deadline is a timeout, not a result.
 * - Memory: the QuickJS heap limit, plus a cap on the module's whole wasm memory, because ArrayBuffer
 *   data is not counted by QuickJS's limit. A module whose memory grew past its baseline is dropped
 *   after the call, so the host gets the memory back and the next call starts from a fresh module.
 * - Guest stack limit (≤ 128 KiB); captured output capped with a truncation marker (a long line is cut
 *   inside the guest, before it crosses to the host); the result value formatted into a bounded string
 *   (cycles, getters, huge arrays) by a formatter in a context of its own that user code never reaches
 *   (guest-values.ts).
 *
 * NOT contained (run this module inside a worker the host can terminate: runJsIsolated, js-thread.ts,
 * is runJs in a thread of its own under a watchdog):
 * - One built-in that never ends (an array method over an array-like of length 2**53): QuickJS polls its
 *   interrupt handler only between bytecodes.
 * - A host function passed in `globals` that loops or blocks once called: it runs on the host thread
 *   and the deadline cannot interrupt it.
 * - CPU contention: the guest runs synchronously on the calling thread until its deadline (or the
 *   wall-clock backstop of 3× it, for a machine too starved to reach the deadline and for guests whose
 *   single operations are long).
 * - The host stack: if `stackBytes` exceeded the host's native stack the host itself would overflow;
 *   that is why `stackBytes` above 128 KiB is refused. Should a host RangeError still escape from the
 *   wasm, the cached module is dropped and rebuilt on the next call, but the calling worker should be
 *   treated as suspect and recreated.
 */
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import releaseSyncVariant from '@jitl/quickjs-wasmfile-release-sync';
import { GuestClock } from './guest-clock.ts';
import { FormatterRealm, GuestValues } from './guest-values.ts';
import { OutputBuffer } from './output-buffer.ts';

/** A synchronous host function exposed to the guest. Arguments arrive as plain values (JSON-like). */
export type HostFunction = (...args: unknown[]) => unknown;

export interface RunJsOptions {
  /** Deadline on the guest's running time for the call, in ms (waiting for a core does not count; see guest-clock.ts). */
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
/** Promise jobs run between two host-side deadline checks. */
const JOB_BATCH = 256;
const WASM_PAGE = 64 * 1024;
/** The module's wasm memory when loaded (Emscripten's INITIAL_MEMORY). */
export const WASM_BASELINE_BYTES = 16 * 1024 * 1024;
/** Wasm memory allowed beyond twice the heap limit: QuickJS's own tables, allocator slack. */
const WASM_HEADROOM_BYTES = 48 * 1024 * 1024;
/** A module whose memory grew past this during a call is dropped after it. */
const RECYCLE_ABOVE_BYTES = WASM_BASELINE_BYTES;

interface CachedModule {
  module: Promise<QuickJSWASMModule>;
  /** The cap on this module's wasm memory, in bytes. */
  maxBytes: number;
}
let cached: CachedModule | null = null;

/** The wasm memory cap for calls with this heap limit, in whole pages. */
function wasmCapFor(memoryBytes: number): number {
  return Math.ceil((2 * memoryBytes + WASM_HEADROOM_BYTES) / WASM_PAGE) * WASM_PAGE;
}

/**
 * The QuickJS wasm module (release-sync variant only, so one wasm file is bundled), reused across
 * calls until one grows it. Its wasm memory is capped at `maxBytes`; a larger cap loads a new module.
 */
export function loadQuickJS(maxBytes = wasmCapFor(DEFAULT_RUN_OPTIONS.memoryBytes)): Promise<QuickJSWASMModule> {
  if (!cached || cached.maxBytes < maxBytes) {
    const memory = new WebAssembly.Memory({
      initial: WASM_BASELINE_BYTES / WASM_PAGE,
      maximum: Math.max(maxBytes, WASM_BASELINE_BYTES) / WASM_PAGE,
    });
    const entry: CachedModule = {
      module: newQuickJSWASMModuleFromVariant(newVariant(releaseSyncVariant, { wasmMemory: memory })),
      maxBytes,
    };
    // A failed load is not cached: the next call tries again.
    entry.module.catch(() => {
      if (cached === entry) cached = null;
    });
    cached = entry;
  }
  return cached.module;
}

/** Bytes of wasm memory the cached module holds now; the baseline when none is loaded. */
export async function quickJsMemoryBytes(): Promise<number> {
  return cached ? (await cached.module).getWasmMemory().buffer.byteLength : WASM_BASELINE_BYTES;
}

function dropModule(module: Promise<QuickJSWASMModule>): void {
  if (cached?.module === module) cached = null;
}

/** The options with their defaults; throws a RangeError naming an option out of range. */
export function resolveRunOptions(
  opts: RunJsOptions,
): Required<Omit<RunJsOptions, 'globals'>> & { globals: Record<string, HostFunction> } {
  const o = { ...DEFAULT_RUN_OPTIONS, globals: {}, ...opts };
  if (o.stackBytes > MAX_STACK_BYTES || o.stackBytes <= 0) {
    throw new RangeError(
      `runJs: stackBytes ${o.stackBytes} is out of range; use 1..${MAX_STACK_BYTES} (a larger guest stack can overflow the host's native stack in a browser worker)`,
    );
  }
  for (const key of ['timeoutMs', 'memoryBytes', 'maxOutputBytes', 'maxValueChars'] as const) {
    if (!(o[key] > 0)) throw new RangeError(`runJs: ${key} must be a positive number, got ${o[key]}`);
  }
  return o;
}

/** A result that failed with `error`. */
export function failedRun(error: string, extra: Partial<RunJsResult> = {}): RunJsResult {
  return { ok: false, value: null, stdout: '', error, timedOut: false, memoryExceeded: false, ...extra };
}

/**
 * Run `code` as a classic script and return its completion value. Guest errors (exceptions, timeouts,
 * out-of-memory, stack overflow) come back in the result; only invalid options throw.
 */
export async function runJs(code: string, opts: RunJsOptions = {}): Promise<RunJsResult> {
  const options = resolveRunOptions(opts);
  const modulePromise = loadQuickJS(wasmCapFor(options.memoryBytes));
  const quickjs = await modulePromise;
  try {
    return runInFreshContext(quickjs, code, options, () => dropModule(modulePromise));
  } catch (e) {
    // The module's state is unknown after a host failure inside the wasm: drop it.
    dropModule(modulePromise);
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    // A RangeError is the host's own stack overflowing inside the wasm; anything else a wasm abort.
    if (e instanceof RangeError)
      return failedRun(`host stack exhausted (${message}); the QuickJS module will be reloaded`);
    return failedRun(`sandbox failure: ${message}`);
  } finally {
    // Wasm memory never shrinks: a module that grew is replaced, so the host gets the memory back.
    if (quickjs.getWasmMemory().buffer.byteLength > RECYCLE_ABOVE_BYTES) dropModule(modulePromise);
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

/**
 * The runtime a call's fresh context lives in. Creating a runtime was a fifth of a call, so one that
 * served a call cleanly (it finished, no promise job left queued: nothing of that call can run later)
 * serves the next one, for at most RUNTIME_CALLS calls; any other ending frees it.
 */
interface RuntimeLease {
  module: QuickJSWASMModule;
  runtime: QuickJSRuntime;
  /** The object formatter's context, kept with the runtime (guest-values.ts). */
  objects: FormatterRealm;
  calls: number;
}
const RUNTIME_CALLS = 100;
let spareRuntime: RuntimeLease | null = null;

function takeRuntime(quickjs: QuickJSWASMModule): RuntimeLease {
  const spare = spareRuntime;
  spareRuntime = null;
  if (spare?.module === quickjs) return spare;
  if (spare) freeRuntime(spare);
  const runtime = quickjs.newRuntime();
  return { module: quickjs, runtime, objects: new FormatterRealm(runtime), calls: 0 };
}

function giveBack(lease: RuntimeLease, clean: boolean): void {
  lease.calls++;
  if (clean && lease.calls < RUNTIME_CALLS && !lease.runtime.hasPendingJob()) spareRuntime = lease;
  else disposeLease(lease);
}

function disposeLease(lease: RuntimeLease): void {
  lease.objects.dispose();
  lease.runtime.dispose();
}

function freeRuntime(lease: RuntimeLease): void {
  try {
    disposeLease(lease);
  } catch {
    // Its module was dropped or aborted; the memory goes with the module.
  }
}

type ResolvedRunOptions = ReturnType<typeof resolveRunOptions>;

/**
 * The guest's running-time deadline: the clock that counts now (setting up, the user's code, formatting its
 * result each get their own) and whether the guest was stopped for passing it.
 */
interface GuestDeadline {
  clock: GuestClock;
  interrupted: boolean;
}

/** `onBroken` is told when freeing the runtime failed: QuickJS leaks objects after an out-of-memory inside a promise job. */
function runInFreshContext(
  quickjs: QuickJSWASMModule,
  code: string,
  o: ResolvedRunOptions,
  onBroken: () => void,
): RunJsResult {
  const lease = takeRuntime(quickjs);
  const { runtime } = lease;
  let clean = false;
  // Setting up the context runs under a deadline too; the user's code gets a full one of its own after it.
  const deadline: GuestDeadline = { clock: new GuestClock(o.timeoutMs), interrupted: false };
  runtime.setMemoryLimit(o.memoryBytes);
  runtime.setMaxStackSize(o.stackBytes);
  runtime.setInterruptHandler(() => {
    if (!deadline.clock.expired()) return false;
    deadline.interrupted = true;
    return true;
  });
  const ctx = runtime.newContext();
  const out = new OutputBuffer(o.maxOutputBytes);
  const handles: QuickJSHandle[] = [];
  const keep = (h: QuickJSHandle) => (handles.push(h), h);

  try {
    // Before any user code: the pristine built-ins (guest-values.ts), and a console whose lines the host
    // cuts to what the buffer can still take, counting the rest.
    const values = new GuestValues(ctx, keep, lease.objects);
    installConsole(ctx, values, keep, out, deadline, o);
    installGlobals(ctx, values, keep, deadline, o);

    // Setting up can be slow on a loaded machine: the user's code's deadline starts now.
    deadline.clock = new GuestClock(o.timeoutMs);
    const outcome = evaluate(ctx, code, () => {
      if (deadline.clock.expired()) deadline.interrupted = true;
      return deadline.interrupted;
    });
    // Once more at the end: a last built-in that ran past the deadline reached no interrupt check after it.
    if (deadline.clock.expired()) deadline.interrupted = true;
    const timedOut = deadline.interrupted;
    if ('pending' in outcome) {
      if (timedOut) return failedRun(timeoutMessage(o.timeoutMs), { stdout: out.text(), timedOut });
      return failedRun('the promise never settled (the sandbox has no timers or I/O)', { stdout: out.text() });
    }
    if ('value' in outcome && timedOut) {
      outcome.value.dispose();
      return failedRun(timeoutMessage(o.timeoutMs), { stdout: out.text(), timedOut });
    }
    deadline.clock = new GuestClock(FORMAT_GRACE_MS);

    if ('error' in outcome) return thrownResult(ctx, values, outcome.error, code, timedOut, out, o);
    const value = values.format(outcome.value, o.maxValueChars) ?? '[unprintable value]';
    outcome.value.dispose();
    clean = true;
    return { ok: true, value, stdout: out.text(), error: null, timedOut: false, memoryExceeded: false };
  } finally {
    try {
      for (const h of handles.reverse()) if (h.alive) h.dispose();
      ctx.dispose();
      giveBack(lease, clean);
    } catch {
      // The wasm aborted while freeing: the result above stands, the module is not reused.
      onBroken();
    }
  }
}

/** `console.log` and its aliases, writing to `out`. */
function installConsole(
  ctx: QuickJSContext,
  values: GuestValues,
  keep: (h: QuickJSHandle) => QuickJSHandle,
  out: OutputBuffer,
  deadline: GuestDeadline,
  o: ResolvedRunOptions,
): void {
  const log = keep(
    ctx.newFunction('log', (...args) => {
      // The deadline first, on every call: a guest that mostly calls console spends its time here, where
      // QuickJS's interrupt check never runs, so this is where its running time is counted. Past it the
      // call throws into the guest (formatting its arguments could run getters for ever).
      if (deadline.clock.expired()) {
        deadline.interrupted = true;
        return { error: ctx.newError('console: refused, the deadline has passed') };
      }
      if (out.full) {
        out.drop(args.reduce((n, a, i) => n + (i ? 1 : 0) + values.formattedLength(a, CONSOLE_VALUE_CHARS), 0));
        return;
      }
      const { text, length } = consoleLine(values, args, o.maxOutputBytes + 1);
      out.write(text);
      out.drop(length - text.length);
    }),
  );
  const consoleObject = keep(ctx.newObject());
  for (const name of ['log', 'info', 'warn', 'error', 'debug']) ctx.setProp(consoleObject, name, log);
  ctx.setProp(ctx.global, 'console', consoleObject);
}

/** The host functions of `o.globals`, each refused past the deadline, its arguments and result passed as JSON values. */
function installGlobals(
  ctx: QuickJSContext,
  values: GuestValues,
  keep: (h: QuickJSHandle) => QuickJSHandle,
  deadline: GuestDeadline,
  o: ResolvedRunOptions,
): void {
  const parseJson = values.parseJson;
  for (const [name, fn] of Object.entries(o.globals)) {
    const guestFn = keep(
      ctx.newFunction(name, (...args) => {
        if (deadline.clock.expired())
          return { error: ctx.newError(`${name}: refused, the ${o.timeoutMs} ms deadline has passed`) };
        try {
          return toGuest(ctx, parseJson, fn(...args.map((a) => ctx.dump(a))));
        } catch (e) {
          return { error: ctx.newError(e instanceof Error ? e.message : String(e)) };
        }
      }),
    );
    ctx.setProp(ctx.global, name, guestFn);
  }
}

/** The result of a script that threw (or whose promise rejected): a timeout, out of memory, or the error described. */
function thrownResult(
  ctx: QuickJSContext,
  values: GuestValues,
  errorHandle: QuickJSHandle,
  code: string,
  timedOut: boolean,
  out: OutputBuffer,
  o: ResolvedRunOptions,
): RunJsResult {
  const isNull = ctx.sameValue(errorHandle, ctx.null);
  const described = isNull ? 'null' : values.describeError(errorHandle, o.maxValueChars);
  errorHandle.dispose();
  // QuickJS throws a bare null when it cannot even allocate its out-of-memory error; a script can
  // throw null too, so a null counts as out-of-memory only when the script could not have thrown it.
  const memoryExceeded =
    (isNull && !/\bthrow\b|\breject\b/.test(code)) || /^InternalError: out of memory/.test(described ?? '');
  let error: string;
  if (timedOut) error = timeoutMessage(o.timeoutMs);
  else if (memoryExceeded) error = `out of memory: the script exceeded the ${formatBytes(o.memoryBytes)} heap limit`;
  else if (isNull) error = 'uncaught exception: null (the script threw null)';
  else error = described ?? 'uncaught exception: a value that could not be described (formatting it did not finish)';
  return { ok: false, value: null, stdout: out.text(), error, timedOut, memoryExceeded };
}

/** Non-string console arguments are formatted to at most this many characters each. */
const CONSOLE_VALUE_CHARS = 10_000;

/** One console line: arguments joined by spaces, cut to `maxLine` characters, and the full line's length. */
function consoleLine(values: GuestValues, args: QuickJSHandle[], maxLine: number): { text: string; length: number } {
  let text = '';
  let length = 0;
  for (const [i, arg] of args.entries()) {
    const sep = i ? ' ' : '';
    const room = Math.max(0, maxLine - text.length - sep.length);
    if (values.isString(arg)) {
      const part = values.stringHead(arg, room);
      text += sep + part.head;
      length += sep.length + part.length;
    } else {
      const part = values.format(arg, CONSOLE_VALUE_CHARS) ?? '[unprintable]';
      text += sep + part;
      length += sep.length + part.length;
    }
  }
  return { text: text.slice(0, maxLine), length };
}

function timeoutMessage(timeoutMs: number): string {
  return `timeout: stopped after ${timeoutMs} ms of running time (the deadline interrupted the script)`;
}

type Outcome = { value: QuickJSHandle } | { error: QuickJSHandle } | { pending: true };

/**
 * Evaluate as a classic script; a promise result (async IIFE) is settled by running its jobs, a batch
 * at a time, until it settles, no job is left, or `stop()` says the deadline has passed.
 */
function evaluate(ctx: QuickJSContext, code: string, stop: () => boolean): Outcome {
  const result = ctx.evalCode(code, 'task.js', { type: 'global' });
  if (result.error) return { error: result.error };
  const state = ctx.getPromiseState(result.value);
  if (state.type === 'fulfilled' && state.notAPromise) return { value: result.value };
  // An already-settled promise hands out a new handle here; every handle must be freed before the
  // runtime is, or QuickJS aborts the whole wasm module.
  if (state.type === 'fulfilled') state.value.dispose();
  else if (state.type === 'rejected') state.error.dispose();
  for (;;) {
    const settled = ctx.getPromiseState(result.value);
    if (settled.type !== 'pending') {
      result.value.dispose();
      return settled.type === 'fulfilled' ? { value: settled.value } : { error: settled.error };
    }
    if (stop()) break;
    const jobs = ctx.runtime.executePendingJobs(JOB_BATCH);
    if (jobs.error) {
      result.value.dispose();
      return { error: jobs.error };
    }
    if (jobs.value === 0) break;
  }
  result.value.dispose();
  return { pending: true };
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024
    ? `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) ? 1 : 0)} MiB`
    : `${Math.round(n / 1024)} KiB`;
}
