/** A counting semaphore: at most `limit` tasks run at once; the rest wait in arrival order. */
export class ConcurrencyLimiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`Concurrency limit must be a positive integer, got ${limit}.`);
  }

  get running(): number {
    return this.active;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter (active stays the same) or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
