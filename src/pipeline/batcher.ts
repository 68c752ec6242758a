/**
 * Batches requests that arrive together: the engine samples all generation requests from all rollout
 * workers that arrive within one short window as one batch (one forward pass per token for all of them).
 */

export interface BatcherOptions {
  maxBatch: number;
  /** How long the first request of a batch waits for company. */
  windowMs: number;
}

interface Waiting<Q, A> {
  request: Q;
  resolve(answer: A): void;
  reject(error: unknown): void;
}

export class Batcher<Q, A> {
  private waiting: Waiting<Q, A>[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> = Promise.resolve();
  /** Sizes of the batches run so far (for metrics and tests). */
  readonly batchSizes: number[] = [];

  constructor(
    private readonly runBatch: (requests: Q[]) => Promise<A[]>,
    private readonly options: BatcherOptions,
  ) {}

  submit(request: Q): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (this.waiting.length >= this.options.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.windowMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.waiting.splice(0, this.options.maxBatch);
    if (!batch.length) return;
    if (this.waiting.length) this.timer = setTimeout(() => this.flush(), this.options.windowMs);
    // Batches run one after another: the model is one resource.
    this.running = this.running.then(async () => {
      this.batchSizes.push(batch.length);
      try {
        const answers = await this.runBatch(batch.map((w) => w.request));
        batch.forEach((w, i) => w.resolve(answers[i]));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    });
  }
}
