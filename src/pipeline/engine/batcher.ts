/**
 * Batches requests that arrive together: the engine samples all generation requests from all rollout
 * workers that arrive within one short window as one batch (one forward pass per token for all of them).
 *
 * A request can be given up (its `signal` fires: the worker that asked was replaced, or the run stopped).
 * It is then rejected at once and dropped: from the waiting list, from a batch queued behind the running
 * one, and, for the batch running now, `runBatch` hears it through that request's signal so it can stop
 * work nobody waits for. Retries therefore never queue behind abandoned work.
 */

export interface BatcherOptions {
  maxBatch: number;
  /** How long the first request of a batch waits for company. */
  windowMs: number;
}

interface Waiting<Q, A> {
  request: Q;
  /** Fires when the asker gives the request up; never fires for a request submitted without one. */
  signal: AbortSignal;
  resolve(answer: A): void;
  reject(error: unknown): void;
}

/** The error an abandoned request is rejected with: the signal's reason when it is an Error. */
export function abandonedError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new DOMException('The generation request was abandoned.', 'AbortError');
}

const NEVER = new AbortController().signal;

export class Batcher<Q, A> {
  private waiting: Waiting<Q, A>[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> = Promise.resolve();
  /** Requests handed to a batch (queued behind the running one, or running) and not given up. */
  private readonly batched = new Set<Waiting<Q, A>>();
  /** Sizes of the batches run so far (for metrics and tests). */
  readonly batchSizes: number[] = [];
  /**
   * One 'abort' listener per signal, calling each of its waiting requests' handlers: a worker's signal
   * carries all of its episodes' requests (up to 16 at a time in a run), and a listener each read as a leak to
   * Node (MaxListenersExceededWarning past 10).
   */
  private readonly onAbortOf = new Map<AbortSignal, Set<() => void>>();

  constructor(
    /** Answers `requests` in order; `signals[i]` fires when request i is given up (its answer is then ignored). */
    private readonly runBatch: (requests: Q[], signals: AbortSignal[]) => Promise<A[]>,
    private readonly options: BatcherOptions,
  ) {}

  submit(request: Q, given?: AbortSignal): Promise<A> {
    // No listener on the shared never-firing signal: dozens of requests at once would read as a leak.
    const signal = given ?? NEVER;
    return new Promise<A>((resolve, reject) => {
      if (signal.aborted) return reject(abandonedError(signal));
      // Each request's handler is dropped once it is answered: a worker's signal lives as long as the worker.
      const onAbort = () => {
        this.waiting = this.waiting.filter((w) => w !== waiting);
        this.batched.delete(waiting);
        reject(abandonedError(signal));
      };
      const waiting: Waiting<Q, A> = {
        request,
        signal,
        resolve: (answer) => {
          this.unwatch(signal, onAbort);
          resolve(answer);
        },
        reject: (error) => {
          this.unwatch(signal, onAbort);
          reject(error);
        },
      };
      if (given) this.watch(given, onAbort);
      this.waiting.push(waiting);
      if (this.waiting.length >= this.options.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.windowMs);
    });
  }

  private watch(signal: AbortSignal, onAbort: () => void): void {
    const handlers = this.onAbortOf.get(signal);
    if (handlers) return void handlers.add(onAbort);
    const all = new Set([onAbort]);
    this.onAbortOf.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        this.onAbortOf.delete(signal);
        for (const handler of all) handler();
      },
      { once: true },
    );
  }

  private unwatch(signal: AbortSignal, onAbort: () => void): void {
    this.onAbortOf.get(signal)?.delete(onAbort);
  }

  /** Resolves once every batch handed to `runBatch` so far has ended (abandoned ones end at their next token). */
  idle(): Promise<void> {
    return this.running;
  }

  /** Requests submitted and neither answered nor given up yet (waiting for a batch, or in one). */
  get pending(): number {
    return this.waiting.length + this.batched.size;
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.waiting.splice(0, this.options.maxBatch);
    if (!batch.length) return;
    if (this.waiting.length) this.timer = setTimeout(() => this.flush(), this.options.windowMs);
    for (const w of batch) this.batched.add(w);
    // Batches run one after another: the model is one resource.
    this.running = this.running.then(async () => {
      // Requests given up while this batch waited its turn are not sampled at all.
      const asked = batch.filter((w) => this.batched.has(w));
      if (!asked.length) return;
      this.batchSizes.push(asked.length);
      try {
        const answers = await this.runBatch(
          asked.map((w) => w.request),
          asked.map((w) => w.signal),
        );
        asked.forEach((w, i) => w.resolve(answers[i]));
      } catch (error) {
        for (const w of asked) w.reject(error);
      } finally {
        for (const w of asked) this.batched.delete(w);
      }
    });
  }
}
