/**
 * A pool of rollout workers that survives its workers. A job runs on one worker; if that worker
 * crashes (a QuickJS stack overflow can take its host down) or hangs past the deadline, the worker is
 * terminated and replaced and the job is queued again, so each job resolves exactly once.
 * Generic over the worker kind: web workers, Node worker_threads, or in-process fakes in tests.
 */

export interface WorkerHandle<J, R, E = unknown> {
  /** `onEvent` hears the job's progress (the Playground streams an episode); the pool passes none. */
  run(job: J, onEvent?: (event: E) => unknown): Promise<R>;
  terminate(): void;
  /** Registers a callback for a crash outside any job call (the worker's `error` event). */
  onCrash(callback: (error: Error) => void): void;
}

export interface PoolOptions {
  size: number;
  /** A job running longer than this is considered hung: its worker is replaced and the job retried. */
  hangTimeoutMs: number;
  /** Attempts per job before it fails for good. */
  maxAttempts: number;
  /** While this says true, the hang deadline does not run out (it is re-armed). */
  paused?: () => boolean;
}

export interface PoolStats {
  size: number;
  busy: number;
  queued: number;
  restarts: number;
}

interface Pending<J, R> {
  job: J;
  attempts: number;
  resolve(result: R): void;
  reject(error: Error): void;
}

interface Slot<J, R> {
  index: number;
  worker: WorkerHandle<J, R>;
  current: Pending<J, R> | null;
  /** Set when the worker is replaced, so late answers and crash events from it are ignored. */
  retired: boolean;
}

export class WorkerPool<J, R> {
  private readonly queue: Pending<J, R>[] = [];
  private readonly slots: Slot<J, R>[] = [];
  private restarts = 0;
  private closed = false;

  constructor(
    private readonly spawn: (index: number) => WorkerHandle<J, R>,
    private readonly options: PoolOptions,
    private readonly onWorkerReplaced: (index: number, reason: string) => void = () => {},
  ) {
    for (let i = 0; i < options.size; i++) this.slots.push(this.makeSlot(i));
  }

  submit(job: J): Promise<R> {
    if (this.closed) return Promise.reject(new Error('The worker pool is closed.'));
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ job, attempts: 0, resolve, reject });
      this.dispatch();
    });
  }

  stats(): PoolStats {
    return { size: this.slots.length, busy: this.slots.filter((s) => s.current).length, queued: this.queue.length, restarts: this.restarts };
  }

  /** Terminates every worker; queued and running jobs are rejected. */
  close(): void {
    this.closed = true;
    const error = new Error('The worker pool was closed.');
    for (const slot of this.slots) {
      slot.current?.reject(error);
      slot.current = null;
      slot.worker.terminate();
    }
    for (const pending of this.queue.splice(0)) pending.reject(error);
  }

  private makeSlot(index: number): Slot<J, R> {
    const slot: Slot<J, R> = { index, worker: this.spawn(index), current: null, retired: false };
    slot.worker.onCrash((error) => {
      if (!slot.retired) this.replace(slot, `crashed: ${error.message}`);
    });
    return slot;
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.closed || !this.queue.length) return;
      if (!slot.current) this.start(slot, this.queue.shift()!);
    }
  }

  private start(slot: Slot<J, R>, pending: Pending<J, R>): void {
    slot.current = pending;
    pending.attempts++;
    const arm = (): ReturnType<typeof setTimeout> => setTimeout(() => {
      if (slot.retired || slot.current !== pending) return;
      // A paused run holds its episodes at their next generation request on purpose: that is no hang.
      if (this.options.paused?.()) timer = arm();
      else this.replace(slot, `hung for more than ${this.options.hangTimeoutMs} ms`);
    }, this.options.hangTimeoutMs);
    let timer = arm();
    slot.worker.run(pending.job).then(
      (result) => {
        clearTimeout(timer);
        if (slot.retired || slot.current !== pending) return;
        slot.current = null;
        pending.resolve(result);
        this.dispatch();
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (slot.retired || slot.current !== pending) return;
        // A rejected call usually means the worker died mid-call: replace it rather than trust it.
        this.replace(slot, `failed: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }

  private replace(slot: Slot<J, R>, reason: string): void {
    if (this.closed) return;
    const pending = slot.current;
    slot.current = null;
    slot.retired = true;
    slot.worker.terminate();
    this.restarts++;
    this.onWorkerReplaced(slot.index, reason);
    this.slots[slot.index] = this.makeSlot(slot.index);
    if (pending) {
      if (pending.attempts >= this.options.maxAttempts) {
        pending.reject(new Error(`A rollout failed on ${pending.attempts} workers in a row (last: worker ${reason}).`));
      } else {
        this.queue.unshift(pending);
      }
    }
    this.dispatch();
  }
}
