/**
 * Worker threads that run the wasm-simd module over the same shared WebAssembly.Memory as the calling
 * thread (tfjs-wasm's heap: the threaded build's in a cross-origin-isolated page, shared-heap.ts's in
 * Node), so that one kernel's work can be split between them with nothing copied.
 *
 * The calling thread hands each worker one share: a few calls of exports in turn (an export's name and
 * its arguments), the whole run `count` times with each call's arguments advanced by its `strides` (a batch
 * of products, a decoding step's attention heads), through a slot of a control block on the heap: it writes the call, bumps the slot's sequence number and Atomics.notify's it, does
 * its own share, then waits until every slot reports that sequence done. A worker spins a little before
 * it sleeps in Atomics.wait, since kernels come back to back within a step and waking a sleeping thread
 * costs tens of microseconds. Which thread computes what is fixed by the caller's split, so a result never
 * depends on timing.
 *
 * The calling thread must be able to block: Node's main thread and a browser worker (the engine's) can,
 * a page's main thread cannot (canBlock is false there and kernels stay on one thread). Workers start
 * asynchronously (a browser starts one only while its creator's event loop turns), so a slot is used
 * once its worker has said it is ready; until then the caller splits the work among fewer threads.
 */

/** What the pool needs of the heap: a malloc for its control block. */
export interface ThreadHeap {
  _malloc(bytes: number): number;
}

/** One export's call: `fn(...args)`, its arguments advanced by `strides` (default zeros) at every repeat of its share. */
export interface KernelCall {
  fn: string;
  args: number[];
  strides?: number[];
}

/** One thread's part of a kernel: its calls in turn, `count` times (default 1). */
export interface KernelShare {
  calls: KernelCall[];
  count?: number;
}

/** Bytes per worker slot: a header of int32s, then every call's arguments, then their strides, as float64s. */
const SLOT_BYTES = 1024;
const HEADER_INTS = 16;
const MAX_ARGS = (SLOT_BYTES - HEADER_INTS * 4) / 16;
const ARGS_AT = HEADER_INTS * 4;
const STRIDES_AT = ARGS_AT + 8 * MAX_ARGS;
/** Header int32s: sequence number, done, state (0 starting), call count (-1: exit), repeat count, then each call's export index and argument count. */
const [SEQ, DONE, STATE, CALLS, COUNT, FIRST_CALL] = [0, 1, 2, 3, 4, 5];
const MAX_CALLS = (HEADER_INTS - FIRST_CALL) / 2;
const [READY, FAILED] = [1, 2];
/** Spins (Atomics.load's) before sleeping: about 20–50 µs, longer than a wake-up costs. */
const SPINS = 20_000;

/** The worker's whole program: plain JS (it is the source of a blob or eval worker, never bundled). */
const WORKER_SOURCE = `
const port = typeof self === 'undefined' ? require('node:worker_threads').parentPort : self;
const listen = (f) => (port.on ? port.on('message', f) : (port.onmessage = (e) => f(e.data)));
listen(({ memory, module, slot, names }) => {
  const exports = new WebAssembly.Instance(module, { env: { memory } }).exports;
  const fns = names.map((name) => exports[name]);
  const head = new Int32Array(memory.buffer, slot, ${HEADER_INTS});
  const args = new Float64Array(memory.buffer, slot + ${ARGS_AT}, ${MAX_ARGS});
  const strides = new Float64Array(memory.buffer, slot + ${STRIDES_AT}, ${MAX_ARGS});
  Atomics.store(head, ${STATE}, ${READY});
  let seen = Atomics.load(head, ${SEQ});
  for (;;) {
    for (let i = 0; i < ${SPINS} && Atomics.load(head, ${SEQ}) === seen; i++);
    Atomics.wait(head, ${SEQ}, seen);
    seen = Atomics.load(head, ${SEQ});
    const calls = head[${CALLS}];
    if (calls < 0) break;
    try {
      const a = Array.from(args);
      for (let r = 0; r < head[${COUNT}]; r++) {
        for (let c = 0, at = 0; c < calls; c++) {
          const argc = head[${FIRST_CALL} + 2 * c + 1];
          fns[head[${FIRST_CALL} + 2 * c]](...a.slice(at, at + argc));
          at += argc;
        }
        for (let i = 0; i < a.length; i++) a[i] += strides[i];
      }
    } catch (error) {
      Atomics.store(head, ${STATE}, ${FAILED});
    }
    Atomics.store(head, ${DONE}, seen);
    Atomics.notify(head, ${DONE});
  }
  if (port.close) port.close();
});
`;

/** A worker as either platform makes it: Node's worker_threads (eval source) or a Web Worker (blob URL). */
interface ThreadWorker {
  postMessage(message: unknown): void;
  terminate(): unknown;
}

const inNode = typeof process !== 'undefined' && Boolean(process.versions?.node);

async function spawnWorker(): Promise<ThreadWorker> {
  if (!inNode) return new Worker(URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' })));
  const specifier = 'node:worker_threads'; // not a literal: the browser bundle must not try to resolve it
  const { Worker: NodeWorker } = (await import(/* @vite-ignore */ specifier)) as typeof import('node:worker_threads');
  const worker = new NodeWorker(WORKER_SOURCE, { eval: true });
  worker.unref(); // idle kernel threads must not keep a CLI run alive
  return worker;
}

let blockingAllowed: boolean | undefined;

/** Whether this thread may Atomics.wait (not a page's main thread) on shared memory. */
export function canBlock(): boolean {
  if (blockingAllowed === undefined) {
    try {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
      blockingAllowed = true;
    } catch {
      blockingAllowed = false;
    }
  }
  return blockingAllowed;
}

/** The cores this engine reports: Node's available parallelism, a browser's hardwareConcurrency. */
export async function coreCount(): Promise<number> {
  if (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) return navigator.hardwareConcurrency;
  const specifier = 'node:os';
  const os = (await import(/* @vite-ignore */ specifier)) as typeof import('node:os');
  return os.availableParallelism();
}

export class KernelThreads {
  private readonly workers: ThreadWorker[] = [];
  private readonly heads: Int32Array[] = [];
  private readonly args: Float64Array[] = [];
  private readonly strides: Float64Array[] = [];
  private control = 0;
  private spawning: Promise<void> | null = null;

  constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly module: WebAssembly.Module,
    private readonly names: readonly string[],
  ) {}

  /** Starts workers until there are `count` (never fewer than before; idle ones only sleep). */
  grow(heap: ThreadHeap, count: number): Promise<void> {
    if (count <= this.workers.length) return this.spawning ?? Promise.resolve();
    if (!this.control) {
      this.control = heap._malloc(SLOT_BYTES * MAX_WORKERS);
      if (!this.control) throw new Error('wasm kernel threads: the heap could not allocate their control block');
    }
    const wanted = Math.min(count, MAX_WORKERS);
    const starts: Promise<void>[] = [];
    while (this.workers.length < wanted) starts.push(this.start(this.workers.length));
    this.spawning = Promise.all(starts).then(() => {
      this.spawning = null;
    });
    return this.spawning;
  }

  /** Workers started (ready or not). */
  get started(): number {
    return this.workers.length;
  }

  /** Workers ready to take a call now. */
  get ready(): number {
    let n = 0;
    while (n < this.heads.length && Atomics.load(this.heads[n], STATE) === READY) n++;
    return n;
  }

  /** Resolves when every worker started so far is ready, or after `timeoutMs` (a worker that never starts only leaves its share here). */
  async whenReady(timeoutMs = 10_000): Promise<void> {
    await this.spawning;
    const deadline = Date.now() + timeoutMs;
    while (this.ready < this.workers.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  /**
   * Runs shares[0] here and shares[1 …] on workers 0 …, returning when all are done. At most
   * `ready + 1` shares; throws if a worker's share failed.
   */
  run(shares: KernelShare[], here: (share: KernelShare) => void): void {
    if (shares.length - 1 > this.ready) throw new Error(`wasm kernel threads: ${shares.length - 1} shares for ${this.ready} ready workers`);
    const sent = shares.slice(1).map((share, w) => this.send(w, share));
    let failed = false;
    try {
      here(shares[0]);
    } finally {
      // Even when this thread's share threw: the caller may free what the workers are still writing.
      sent.forEach((seq, w) => {
        const head = this.heads[w];
        for (let i = 0; i < SPINS && Atomics.load(head, DONE) !== seq; i++);
        for (let done = Atomics.load(head, DONE); done !== seq; done = Atomics.load(head, DONE)) Atomics.wait(head, DONE, done);
        failed ||= Atomics.load(head, STATE) === FAILED;
      });
    }
    if (failed) throw new Error('wasm kernel threads: a worker failed its share of a kernel');
  }

  /** Tells every worker to exit. */
  dispose(): void {
    this.heads.forEach((head) => {
      head[CALLS] = -1;
      Atomics.add(head, SEQ, 1);
      Atomics.notify(head, SEQ);
    });
    for (const worker of this.workers) void worker.terminate();
  }

  private send(w: number, share: KernelShare): number {
    const args = share.calls.flatMap((c) => c.args);
    const head = this.heads[w];
    if (share.calls.length > MAX_CALLS || args.length > MAX_ARGS) throw new Error(`wasm kernel threads: a share of ${share.calls.length} calls, ${args.length} arguments is too large for a slot`);
    this.strides[w].fill(0);
    let at = 0;
    share.calls.forEach((call, c) => {
      const fn = this.names.indexOf(call.fn);
      if (fn < 0) throw new Error(`wasm kernel threads: no export ${call.fn}`);
      head[FIRST_CALL + 2 * c] = fn;
      head[FIRST_CALL + 2 * c + 1] = call.args.length;
      if (call.strides) this.strides[w].set(call.strides, at);
      at += call.args.length;
    });
    head[CALLS] = share.calls.length;
    head[COUNT] = share.count ?? 1;
    this.args[w].fill(0).set(args);
    const seq = Atomics.add(head, SEQ, 1) + 1; // publishes the writes above
    Atomics.notify(head, SEQ);
    return seq;
  }

  private async start(index: number): Promise<void> {
    const slot = this.control + index * SLOT_BYTES;
    const head = new Int32Array(this.memory.buffer, slot, HEADER_INTS).fill(0);
    this.heads.push(head);
    this.args.push(new Float64Array(this.memory.buffer, slot + ARGS_AT, MAX_ARGS));
    this.strides.push(new Float64Array(this.memory.buffer, slot + STRIDES_AT, MAX_ARGS));
    const placeholder: ThreadWorker = { postMessage() {}, terminate() {} };
    this.workers.push(placeholder); // counted at once, so a second grow() does not start it again
    const worker = await spawnWorker();
    this.workers[index] = worker;
    worker.postMessage({ memory: this.memory, module: this.module, slot, names: this.names });
  }
}

/** Workers a pool starts at most (the control block's slots). */
export const MAX_WORKERS = 63;
