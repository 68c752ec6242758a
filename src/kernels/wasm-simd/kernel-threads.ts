/**
 * Worker threads that run the wasm-simd module over the same shared WebAssembly.Memory as the calling
 * thread (tfjs-wasm's heap: the threaded build's in a cross-origin-isolated page, shared-heap.ts's in
 * Node), so that one kernel's work can be split between them with nothing copied.
 *
 * A kernel is cut into shares (work-split.ts): each a few calls of exports in turn (an export's name and
 * its arguments), the whole run `count` times with each call's arguments advanced by its `strides` (a
 * batch of products, a decoding step's attention heads). The calling thread writes the shares to a control
 * block on the heap, bumps the job number and Atomics.notify's the workers; then every thread, the caller
 * included, claims shares one at a time (a compare-and-swap on a counter tagged with the job number) and
 * runs them, and the caller waits until all are done. Which thread runs a share changes nothing in its
 * result (a share's work is fixed, and shares write disjoint outputs), so results never depend on timing;
 * and a worker that is slow to wake (a busy machine) only leaves more shares to the others. Each share has
 * scratch of its own. A worker spins a little before it sleeps in Atomics.wait, since kernels come back
 * to back within a step and waking a sleeping thread costs tens of microseconds.
 *
 * A job may instead be a recorded program (heap-kernels.ts's inPhases: a whole decoding step): phases one
 * after another, each a few shares of one kernel (or of a few independent ones). Every thread claims the
 * program's shares in order, one at a time, and before running one waits until every share of the
 * phases before its own is done: spinning, then (on a busy machine, where the share it waits for may sit on
 * a descheduled thread) asleep, so that the spin does not take that thread's core. So the threads meet between phases without being handed each
 * kernel, and a thread that is late (asleep, or descheduled on a busy machine) leaves its shares to the
 * others instead of holding them up: a share waits only for shares already claimed, never for one that
 * is not (so no order of claims can deadlock).
 *
 * The calling thread must be able to block: Node's main thread and a browser worker (the engine's) can,
 * a page's main thread cannot (canBlock is false there and kernels stay on one thread). Workers start
 * asynchronously (a browser starts one only while its creator's event loop turns); callers cut kernels
 * into as many shares as there are threads ready.
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

/** One part of a kernel: its calls in turn, `count` times (default 1). */
export interface KernelShare {
  calls: KernelCall[];
  count?: number;
}

/**
 * A recorded program on the heap: `length` float64s at byte address `program` (8-aligned): the share
 * count n, then per share its start and end (indices into the same float64s) and the number of shares
 * that must be done before it may start (its phase's first share), then the shares' work: blocks, each
 * a KernelShare (encodeShare()). programLayout() writes one.
 */
export interface ProgramShare {
  program: number;
  length: number;
}

/** Workers a pool starts at most, and shares a kernel is cut into at most. */
const MAX_WORKERS = 63;
const MAX_SHARES = MAX_WORKERS + 1;
/**
 * The control block: a header of int32s (the job number, the claim counter, shares done, the share count
 * (-1: exit), a failure flag, then one ready flag per worker; a recorded program's claim counter and
 * shares done, each on a cache line of its own, since threads spin on them, and its sleepers), then one slot per share:
 * int32s (call count, repeat count, then each call's export index and argument count), every call's
 * arguments, their strides.
 */
const [JOB, CLAIM, DONE, SHARES, FAILED] = [0, 1, 2, 3, 4];
const READY_AT = 8;
const [PROGRAM_CLAIM, PROGRAM_DONE] = [READY_AT + MAX_WORKERS + 1 + 16, READY_AT + MAX_WORKERS + 1 + 32];
/** Threads asleep until a program's next share is done (they spun for SPINS first). */
const PROGRAM_WAITERS = PROGRAM_DONE + 1;
const HEADER_BYTES = (PROGRAM_DONE + 16) * 4;
const SLOT_BYTES = 1024;
const SLOT_INTS = 16;
const [CALLS, COUNT, FIRST_CALL] = [0, 1, 2];
const MAX_CALLS = (SLOT_INTS - FIRST_CALL) / 2;
const MAX_ARGS = (SLOT_BYTES - SLOT_INTS * 4) / 16;
const ARGS_AT = SLOT_INTS * 4;
const STRIDES_AT = ARGS_AT + 8 * MAX_ARGS;
/** The claim counter: the job number's low 15 bits, then the next share's index. */
const JOB_SHIFT = 16;
const JOB_MASK = 0x7fff;
/** Spins (Atomics.load's) before sleeping: about 20–50 µs, longer than a wake-up costs. */
const SPINS = 20_000;

/**
 * The share-claiming loop, the same text in the workers and (as a Function) on the calling thread: claims
 * shares of job `job` until none is left; `run(i)` runs share i. Returns whether a share failed here.
 */
const CLAIM_LOOP = `
  let failed = false;
  for (;;) {
    const c = Atomics.load(header, ${CLAIM});
    const i = c & 0xffff;
    if (c >>> ${JOB_SHIFT} !== (job & ${JOB_MASK}) || i >= Atomics.load(header, ${SHARES})) return failed;
    if (Atomics.compareExchange(header, ${CLAIM}, c, c + 1) !== c) continue;
    try {
      run(i);
    } catch (error) {
      failed = true;
      Atomics.store(header, ${FAILED}, 1);
    }
    if (Atomics.add(header, ${DONE}, 1) + 1 === Atomics.load(header, ${SHARES})) Atomics.notify(header, ${DONE});
  }
`;

type ClaimShares = (header: Int32Array, job: number, run: (i: number) => void) => boolean;

/**
 * A KernelShare as a recorded program's block of float64s: its repeat count, its call count, then per
 * call its export's index, its argument count, its arguments and their strides.
 */
export function encodeShare(share: KernelShare, indexOf: (fn: string) => number): number[] {
  // Written index by index: spreads here were a tenth of recording a decoding step.
  const out = [share.count ?? 1, share.calls.length];
  for (const call of share.calls) {
    const { args, strides } = call;
    out.push(indexOf(call.fn), args.length);
    for (let i = 0; i < args.length; i++) out.push(args[i]);
    for (let i = 0; i < args.length; i++) out.push(strides?.[i] ?? 0);
  }
  return out;
}

/** Runs a recorded program's shares as this thread claims them (ProgramShare): the same text in the workers and on the calling thread. */
const PROGRAM_LOOP = `
  const p = new Float64Array(memory.buffer, at, length);
  for (;;) {
    const share = Atomics.add(header, ${PROGRAM_CLAIM}, 1);
    if (share >= p[0]) return;
    const [start, end, after] = [p[1 + 3 * share], p[2 + 3 * share], p[3 + 3 * share]];
    for (let spins = 0, done = Atomics.load(header, ${PROGRAM_DONE}); done < after; done = Atomics.load(header, ${PROGRAM_DONE})) {
      if (Atomics.load(header, ${FAILED})) throw new Error('a share of this job failed');
      if (++spins < ${SPINS}) continue;
      Atomics.add(header, ${PROGRAM_WAITERS}, 1); // a long wait (the share before is on a descheduled thread): sleep, and leave it the core
      Atomics.wait(header, ${PROGRAM_DONE}, done, 1);
      Atomics.sub(header, ${PROGRAM_WAITERS}, 1);
    }
    for (let block = start; block < end; ) {
      const [count, calls] = [p[block], p[block + 1]];
      let i = block + 2;
      for (let r = 0; r < count; r++) {
        i = block + 2;
        for (let c = 0; c < calls; c++) {
          const args = new Array(p[i + 1]);
          for (let j = 0; j < args.length; j++) args[j] = p[i + 2 + j] + r * p[i + 2 + args.length + j];
          fns[p[i]].apply(null, args);
          i += 2 + 2 * args.length;
        }
      }
      block = i;
    }
    Atomics.add(header, ${PROGRAM_DONE}, 1);
    if (Atomics.load(header, ${PROGRAM_WAITERS}) > 0) Atomics.notify(header, ${PROGRAM_DONE});
  }
`;

/** How many float64s programLayout writes for these phases. */
export function programLength(phases: number[][][]): number {
  let length = 1;
  for (const phase of phases) for (const share of phase) length += 3 + share.length;
  return length;
}

/**
 * Writes a program's float64s (ProgramShare) from its phases, each a list of shares, each a share's blocks
 * (encodeShare's, one after another), to `out` (programLength(phases) long: a view of the heap, so that
 * nothing is copied twice).
 */
export function programLayout(phases: number[][][], out: Float64Array): void {
  let shares = 0;
  for (const phase of phases) shares += phase.length;
  out[0] = shares;
  let [share, at, before] = [0, 1 + 3 * shares, 0];
  for (const phase of phases) {
    for (const block of phase) {
      const header = 1 + 3 * share++;
      out[header] = at;
      out[header + 1] = at + block.length;
      out[header + 2] = before;
      out.set(block, at);
      at += block.length;
    }
    before += phase.length;
  }
}

type RunProgram = (
  memory: WebAssembly.Memory,
  fns: readonly unknown[],
  header: Int32Array,
  at: number,
  length: number,
) => void;

/** The worker's whole program: plain JS (it is the source of a blob or eval worker, never bundled). */
const WORKER_SOURCE = `
const port = typeof self === 'undefined' ? require('node:worker_threads').parentPort : self;
const listen = (f) => (port.on ? port.on('message', f) : (port.onmessage = (e) => f(e.data)));
const claimShares = (header, job, run) => {${CLAIM_LOOP}};
const runProgram = (memory, fns, header, at, length) => {${PROGRAM_LOOP}};
listen(({ memory, module, control, index, names }) => {
  const exports = new WebAssembly.Instance(module, { env: { memory } }).exports;
  const fns = names.map((name) => exports[name]);
  const header = new Int32Array(memory.buffer, control, ${HEADER_BYTES / 4});
  const slots = Array.from({ length: ${MAX_SHARES} }, (_, i) => {
    const at = control + ${HEADER_BYTES} + i * ${SLOT_BYTES};
    return { ints: new Int32Array(memory.buffer, at, ${SLOT_INTS}), args: new Float64Array(memory.buffer, at + ${ARGS_AT}, ${MAX_ARGS}), strides: new Float64Array(memory.buffer, at + ${STRIDES_AT}, ${MAX_ARGS}) };
  });
  const run = (i) => {
    const { ints, args, strides } = slots[i];
    if (ints[${CALLS}] < 0) return runProgram(memory, fns, header, args[0], args[1]);
    const a = Array.from(args);
    for (let r = 0; r < ints[${COUNT}]; r++) {
      for (let c = 0, at = 0; c < ints[${CALLS}]; c++) {
        const argc = ints[${FIRST_CALL} + 2 * c + 1];
        fns[ints[${FIRST_CALL} + 2 * c]](...a.slice(at, at + argc));
        at += argc;
      }
      for (let i = 0; i < a.length; i++) a[i] += strides[i];
    }
  };
  Atomics.store(header, ${READY_AT} + index, 1);
  let job = Atomics.load(header, ${JOB});
  for (;;) {
    for (let i = 0; i < ${SPINS} && Atomics.load(header, ${JOB}) === job; i++);
    Atomics.wait(header, ${JOB}, job);
    job = Atomics.load(header, ${JOB});
    if (Atomics.load(header, ${SHARES}) < 0) break;
    if (claimShares(header, job, run)) Atomics.store(header, ${READY_AT} + index, 0); // failed: take no more shares
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
  private control = 0;
  private header: Int32Array | null = null;
  private spawning: Promise<void> | null = null;
  /** CLAIM_LOOP and PROGRAM_LOOP compiled here (it throws where a content security policy forbids eval: no pool then). */
  private readonly claimShares = new Function('header', 'job', 'run', CLAIM_LOOP) as ClaimShares;
  private readonly runProgramHere = new Function('memory', 'fns', 'header', 'at', 'length', PROGRAM_LOOP) as RunProgram;

  constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly module: WebAssembly.Module,
    private readonly names: readonly string[],
  ) {}

  /** Starts workers until there are `count` (never fewer than before; idle ones only sleep). */
  grow(heap: ThreadHeap, count: number): Promise<void> {
    if (count <= this.workers.length) return this.spawning ?? Promise.resolve();
    if (!this.header) {
      const bytes = HEADER_BYTES + MAX_SHARES * SLOT_BYTES;
      this.control = heap._malloc(bytes) >>> 0;
      if (!this.control) throw new Error('wasm kernel threads: the heap could not allocate their control block');
      new Uint8Array(this.memory.buffer, this.control, bytes).fill(0);
      this.header = new Int32Array(this.memory.buffer, this.control, HEADER_BYTES / 4);
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

  /** Workers ready to take shares now. */
  get ready(): number {
    let n = 0;
    for (let w = 0; w < this.workers.length; w++) n += Atomics.load(this.header!, READY_AT + w);
    return n;
  }

  /** Resolves when every worker started so far is ready, or after `timeoutMs` (a worker that never starts leaves its shares to the others). */
  async whenReady(timeoutMs = 10_000): Promise<void> {
    await this.spawning;
    const deadline = Date.now() + timeoutMs;
    while (this.ready < this.workers.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 1));
  }

  /**
   * Runs a recorded program on this thread and on up to `threads` - 1 workers, whichever join it; `fns`
   * are this thread's exports in the order the program's indices name them.
   */
  runProgram(program: ProgramShare, threads: number, fns: readonly ((...args: number[]) => void)[]): void {
    const tickets = Array.from({ length: Math.max(1, Math.min(threads, MAX_SHARES)) }, () => program); // one per thread that may join
    this.run(tickets, (share) => this.runProgramHere(this.memory, fns, this.header!, share.program, share.length));
  }

  /**
   * Runs every share, on this thread and on whichever workers claim them, and returns when all are done
   * (`here` runs a share on this thread). Throws if a share failed, once no thread is still in one.
   */
  run<Share extends KernelShare | ProgramShare>(shares: Share[], here: (share: Share) => void): void {
    const header = this.header!;
    if (shares.length > MAX_SHARES)
      throw new Error(`wasm kernel threads: ${shares.length} shares, at most ${MAX_SHARES}`);
    shares.forEach((share, i) => this.write(i, share));
    Atomics.store(header, DONE, 0);
    Atomics.store(header, FAILED, 0);
    Atomics.store(header, PROGRAM_CLAIM, 0);
    Atomics.store(header, PROGRAM_DONE, 0);
    Atomics.store(header, SHARES, shares.length);
    const job = (Atomics.load(header, JOB) + 1) | 0;
    Atomics.store(header, CLAIM, (job & JOB_MASK) << JOB_SHIFT);
    Atomics.store(header, JOB, job); // publishes everything above
    Atomics.notify(header, JOB);
    this.claimShares(header, job, (i) => here(shares[i]));
    for (let i = 0; i < SPINS && Atomics.load(header, DONE) !== shares.length; i++);
    for (let done = Atomics.load(header, DONE); done !== shares.length; done = Atomics.load(header, DONE))
      Atomics.wait(header, DONE, done);
    if (Atomics.load(header, FAILED)) throw new Error('wasm kernel threads: a share of a kernel failed');
  }

  /** Tells every worker to exit. */
  dispose(): void {
    if (this.header) {
      Atomics.store(this.header, SHARES, -1);
      Atomics.add(this.header, JOB, 1);
      Atomics.notify(this.header, JOB);
    }
    for (const worker of this.workers) void worker.terminate();
  }

  /** Share i's calls (or its program's place) into its slot. */
  private write(i: number, share: KernelShare | ProgramShare): void {
    const at = this.control + HEADER_BYTES + i * SLOT_BYTES;
    if ('program' in share) {
      new Int32Array(this.memory.buffer, at, SLOT_INTS)[CALLS] = -1;
      new Float64Array(this.memory.buffer, at + ARGS_AT, 2).set([share.program, share.length]);
      return;
    }
    const args = share.calls.flatMap((c) => c.args);
    if (share.calls.length > MAX_CALLS || args.length > MAX_ARGS)
      throw new Error(
        `wasm kernel threads: a share of ${share.calls.length} calls, ${args.length} arguments is too large for a slot`,
      );
    const ints = new Int32Array(this.memory.buffer, at, SLOT_INTS);
    const strides = new Float64Array(this.memory.buffer, at + STRIDES_AT, MAX_ARGS).fill(0);
    let offset = 0;
    share.calls.forEach((call, c) => {
      const fn = this.names.indexOf(call.fn);
      if (fn < 0) throw new Error(`wasm kernel threads: no export ${call.fn}`);
      ints[FIRST_CALL + 2 * c] = fn;
      ints[FIRST_CALL + 2 * c + 1] = call.args.length;
      if (call.strides) strides.set(call.strides, offset);
      offset += call.args.length;
    });
    ints[CALLS] = share.calls.length;
    ints[COUNT] = share.count ?? 1;
    new Float64Array(this.memory.buffer, at + ARGS_AT, MAX_ARGS).fill(0).set(args);
  }

  private async start(index: number): Promise<void> {
    const placeholder: ThreadWorker = { postMessage() {}, terminate() {} };
    this.workers.push(placeholder); // counted at once, so a second grow() does not start it again
    const worker = await spawnWorker();
    this.workers[index] = worker;
    worker.postMessage({ memory: this.memory, module: this.module, control: this.control, index, names: this.names });
  }
}
