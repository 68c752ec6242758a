/**
 * The js deadline counts the guest's own running time, not wall time. On a busy machine (training in
 * the engine, other tabs) the thread that runs QuickJS waits for a core, and a wall-clock deadline then
 * stops a trivial script: rewards would depend on how loaded the CPU is. No browser tells a thread its
 * CPU time, so running time is read from the checks themselves: QuickJS calls its interrupt handler
 * every few thousand bytecodes (far less than a millisecond of work), and the host checks between
 * promise jobs and in host calls. A gap between two checks counts in full up to MAX_GAP_MS; a longer
 * gap is time the thread was not running the guest, and only MAX_GAP_MS of it counts.
 *
 * Except a gap longer than LONG_OP_MS: that is one built-in running without reaching a check (a
 * BigInt's toString near QuickJS's size cap, a sort of huge strings), not a wait for a core (a
 * scheduler that makes progress gives a runnable thread a core many times in that span: its periods
 * are tens of milliseconds, a container's CPU quota 100 ms), and it counts in full. So a script whose
 * last built-in ends past the deadline fails at the check after it (runJs checks once more when the
 * script ends); a built-in that never ends is the watchdog's (js-thread.ts).
 *
 * A wall-clock backstop (WALL_FACTOR × the budget) still stops a guest on a machine too starved to
 * make progress, and a guest made of many built-ins each shorter than LONG_OP_MS (a 4 MB string
 * formatted per console.log): such gaps look like waiting for a core and are not counted. The factor
 * is 3, not more, so that guest is stopped within a few deadlines.
 */
export const MAX_GAP_MS = 2;
export const LONG_OP_MS = 250;
export const WALL_FACTOR = 3;

export class GuestClock {
  private last: number;
  private spent = 0;
  private readonly wallEnd: number;

  constructor(
    private readonly budgetMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
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
    const gap = Math.max(0, t - this.last);
    this.spent += gap > LONG_OP_MS ? gap : Math.min(gap, MAX_GAP_MS);
    this.last = t;
    return this.spent > this.budgetMs || t > this.wallEnd;
  }
}
