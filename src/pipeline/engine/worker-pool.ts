/**
 * A pool of rollout workers that survives its workers. A job runs on one worker; if that worker
 * crashes (a QuickJS stack overflow can take its host down) or makes no progress for the hang timeout,
 * the worker is terminated and replaced and the job is queued again, so each job resolves exactly once.
 * Generic over the worker kind: web workers, Node worker_threads, or in-process fakes in tests. A
 * replacement comes from the same `spawn` as the first worker, so whatever readies a worker there (a
 * rollout worker's configuration, rollout-protocol.ts configuredWorker) is done again before its first job.
 *
 * The watchdog judges progress, not an episode's wall time: most of an episode is spent waiting for the
 * engine to sample tokens, and on a slow backend or a big model that wait is long without anything being
 * wrong. So each worker gets a WorkerLink through which whatever serves it on the engine's side (the
 * run's generator: GenerationService.forWorker) says when the worker waits on the engine; the hang clock
 * stands still during those waits and starts afresh after each. Only time the worker spends on its own
 * (the sandbox, its judges, a crashed thread that never answers) counts towards the hang timeout.
 * Replacing a worker cannot help an engine that is slow, and an engine that fails rejects the request,
 * which fails the episode like any other error. The link's signal fires when the worker is given up
 * (replaced, or the pool closed), so the engine drops the work it was doing for it.
 */

export interface WorkerHandle<J, R, E = unknown> {
  /** `onEvent` hears the job's progress (the Playground streams an episode); the pool passes none. */
  run(job: J, onEvent?: (event: E) => unknown): Promise<R>;
  terminate(): void;
  /** Registers a callback for a crash outside any job call (the worker's `error` event). */
  onCrash(callback: (error: Error) => void): void;
}

/** What the pool hands each worker it spawns, for the engine side of that worker. */
export interface WorkerLink {
  /** Fires when this worker is given up (replaced, or the pool closed): work done on its behalf should stop. */
  readonly signal: AbortSignal;
  /**
   * Says the worker now waits on the engine (a generation request it sent); the returned function says the
   * answer is back. While a wait is open the worker cannot be taken for hung.
   */
  waitOnEngine(): () => void;
}

export interface PoolOptions {
  size: number;
  /**
   * Jobs a worker runs at once (default 1). An episode spends most of its time waiting for the engine's
   * tokens, so several per worker give the engine more concurrent turns to batch without more threads.
   */
  jobsPerWorker?: number;
  /** A job that makes no progress of its own for this long is considered hung: its worker is replaced and the job retried. */
  hangTimeoutMs: number;
  /** Attempts per job before it fails for good. */
  maxAttempts: number;
  /** While this says true, the hang deadline does not run out (it is re-armed). */
  paused?: () => boolean;
  /** What the hang deadlines are timed by: the real timers unless given (a test drives its own). */
  clock?: Clock;
}

/** Time as the watchdog sees it: the current time in ms, and timers on that time. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

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
  /** The jobs it runs now. */
  current: Set<Pending<J, R>>;
  /** Set when the worker is replaced, so late answers and crash events from it are ignored. */
  retired: boolean;
  /** Aborted when the worker is given up (its link's signal). */
  abandon: AbortController;
  /** Waits on the engine open now: while there are any, the hang clock does not run. */
  engineWaits: number;
  /** The running hang deadline's timer, if any. */
  deadline: unknown;
}

export class WorkerPool<J, R> {
  private readonly queue: Pending<J, R>[] = [];
  private readonly slots: Slot<J, R>[] = [];
  private restarts = 0;
  private readonly clock: Clock;
  /** Why the pool was closed (what later submissions are rejected with); null while open. */
  private closedWith: Error | null = null;

  constructor(
    private readonly spawn: (index: number, link: WorkerLink) => WorkerHandle<J, R>,
    private readonly options: PoolOptions,
    private readonly onWorkerReplaced: (index: number, reason: string) => void = () => {},
  ) {
    this.clock = options.clock ?? REAL_CLOCK;
    for (let i = 0; i < options.size; i++) this.slots.push(this.makeSlot(i));
  }

  submit(job: J): Promise<R> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ job, attempts: 0, resolve, reject });
      this.dispatch();
    });
  }

  stats(): PoolStats {
    return {
      size: this.slots.length,
      busy: this.slots.filter((s) => s.current.size > 0).length,
      queued: this.queue.length,
      restarts: this.restarts,
    };
  }

  /**
   * Terminates every worker; queued and running jobs are rejected with `reason` and the engine work done
   * for them is abandoned (each link's signal fires). Closing twice does nothing more.
   */
  close(reason: Error = new Error('The worker pool was closed.')): void {
    if (this.closedWith) return;
    this.closedWith = reason;
    for (const slot of this.slots) {
      for (const pending of slot.current) pending.reject(reason);
      slot.current.clear();
      this.retire(slot, reason);
    }
    for (const pending of this.queue.splice(0)) pending.reject(reason);
  }

  private makeSlot(index: number): Slot<J, R> {
    const abandon = new AbortController();
    const slot: Slot<J, R> = {
      index,
      worker: null!,
      current: new Set(),
      retired: false,
      abandon,
      engineWaits: 0,
      deadline: null,
    };
    const link: WorkerLink = {
      signal: abandon.signal,
      waitOnEngine: () => {
        slot.engineWaits++;
        this.disarm(slot);
        let open = true;
        return () => {
          if (!open) return;
          open = false;
          slot.engineWaits--;
          // The answer is back: the worker has the full timeout again to get to its next request.
          if (!slot.engineWaits) this.arm(slot);
        };
      },
    };
    slot.worker = this.spawn(index, link);
    slot.worker.onCrash((error) => {
      if (!slot.retired) this.replace(slot, `crashed: ${error.message}`);
    });
    return slot;
  }

  /** Starts (or restarts) the slot's hang deadline, unless the worker waits on the engine. */
  private arm(slot: Slot<J, R>): void {
    this.disarm(slot);
    if (slot.retired || slot.current.size === 0 || slot.engineWaits > 0) return;
    const { hangTimeoutMs } = this.options;
    const due = this.clock.now() + hangTimeoutMs;
    // Every sign of progress (an engine wait, a finished job) re-arms, clearing this timer: if it fires, none came.
    slot.deadline = this.clock.setTimeout(() => {
      slot.deadline = null;
      if (slot.retired || slot.current.size === 0) return;
      // A deadline that fires late found this thread busy (a wasm batch does not yield between tokens):
      // the worker's next request may be queued behind it, unheard. It is judged again, on time.
      const late = this.clock.now() - due > Math.min(1000, hangTimeoutMs / 4);
      // A paused run holds its episodes at their next generation request on purpose: that is no hang.
      if (late || this.options.paused?.()) return this.arm(slot);
      // Even on time, a request the worker sent may be queued behind this very timer: the verdict waits one
      // task, so a message already in the thread's queue is heard first (its wait disarms this).
      // Progress meanwhile (a wait opened, a job finished) clears this timer as it re-arms or disarms.
      slot.deadline = this.clock.setTimeout(() => {
        slot.deadline = null;
        if (!slot.retired && slot.current.size > 0 && slot.engineWaits === 0) {
          this.replace(slot, `hung: no progress of its own (outside the engine) for ${hangTimeoutMs} ms`);
        }
      }, 0);
    }, hangTimeoutMs);
  }

  private disarm(slot: Slot<J, R>): void {
    if (slot.deadline !== null) this.clock.clearTimeout(slot.deadline);
    slot.deadline = null;
  }

  /** Stops listening to the slot's worker, ends it, and abandons what the engine does for it. */
  private retire(slot: Slot<J, R>, reason: Error): void {
    slot.retired = true;
    this.disarm(slot);
    slot.worker.terminate();
    slot.abandon.abort(reason);
  }

  private dispatch(): void {
    const perWorker = this.options.jobsPerWorker ?? 1;
    for (const slot of this.slots) {
      while (!this.closedWith && this.queue.length && slot.current.size < perWorker)
        this.start(slot, this.queue.shift()!);
    }
  }

  private start(slot: Slot<J, R>, pending: Pending<J, R>): void {
    slot.current.add(pending);
    pending.attempts++;
    // A job that starts is no sign of the others' progress: a running hang clock keeps running.
    if (slot.deadline === null) this.arm(slot);
    slot.worker.run(pending.job).then(
      (result) => {
        if (slot.retired || !slot.current.has(pending)) return;
        slot.current.delete(pending);
        // A finished job is progress: the others on this worker get the full timeout again.
        this.arm(slot);
        pending.resolve(result);
        this.dispatch();
      },
      (error: unknown) => {
        if (slot.retired || !slot.current.has(pending)) return;
        this.disarm(slot);
        // A rejected call usually means the worker died mid-call: replace it rather than trust it.
        this.replace(slot, `failed: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }

  private replace(slot: Slot<J, R>, reason: string): void {
    if (this.closedWith) return;
    const running = [...slot.current];
    slot.current.clear();
    this.retire(slot, new Error(`Rollout worker ${slot.index} ${reason}; it was replaced.`));
    this.restarts++;
    this.onWorkerReplaced(slot.index, reason);
    this.slots[slot.index] = this.makeSlot(slot.index);
    // Every job the worker ran goes again (which of them hung or crashed it cannot be told), in order.
    for (const pending of running.reverse()) {
      if (pending.attempts >= this.options.maxAttempts) {
        pending.reject(new Error(`A rollout failed on ${pending.attempts} workers in a row (last: worker ${reason}).`));
      } else {
        this.queue.unshift(pending);
      }
    }
    this.dispatch();
  }
}
