/**
 * The js deadline counts the guest's own running time, not wall time. On a busy machine (training in
 * the engine, other tabs) the thread that runs QuickJS waits for a core, and a wall-clock deadline then
 * stops a trivial script: rewards would depend on how loaded the CPU is. No browser tells a thread its
 * CPU time, so running time is read from the checks themselves: QuickJS calls its interrupt handler
 * every few thousand bytecodes (far less than a millisecond of work), and the host checks between
 * promise jobs and in host calls. A gap between two checks counts in full up to MAX_GAP_MS; a longer
 * gap is time the thread was not running the guest, and only MAX_GAP_MS of it counts.
 *
 * A wall-clock backstop (WALL_FACTOR × the budget) still stops a guest on a machine too starved to
 * make progress, and a guest whose single operations are long (a 4 MB string formatted per
 * console.log): such gaps look like waiting for a core and are not counted. The factor is 3, not
 * more, so that guest is stopped within a few deadlines; the worker's hang timeout stays the last resort.
 */
export const MAX_GAP_MS = 2;
export const WALL_FACTOR = 3;

export class GuestClock {
  private last: number;
  private spent = 0;
  private readonly wallEnd: number;

  constructor(private readonly budgetMs: number, private readonly now: () => number = () => performance.now()) {
    this.last = now();
    this.wallEnd = this.last + budgetMs * WALL_FACTOR;
  }

  /** Milliseconds of guest running time counted so far. */
  get elapsed(): number {
    return this.spent;
  }

  /** Counts the time since the previous check; true once the budget (or the wall backstop) is spent. */
  expired(): boolean {
    const t = this.now();
    this.spent += Math.min(Math.max(0, t - this.last), MAX_GAP_MS);
    this.last = t;
    return this.spent > this.budgetMs || t > this.wallEnd;
  }
}
