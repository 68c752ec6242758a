/**
 * Progress for long commands, on stderr so stdout stays the result: a bar that redraws in place on
 * a terminal, or one plain line every `stepPercent` % otherwise (logs, CI, tests).
 */
import type { CommandContext } from '../command.ts';

const WIDTH = 24;

export class Progress {
  private done = 0;
  private lastPrinted = -1;
  private readonly started = performance.now();
  private redrawn = false;

  constructor(
    private readonly ctx: CommandContext,
    private readonly label: string,
    private total: number,
    private readonly stepPercent = 25,
  ) {}

  /** Advances by `n` (default 1); `detail` is shown after the counts (e.g. the latest loss). */
  tick(n = 1, detail = ''): void {
    this.update(this.done + n, detail);
  }

  update(done: number, detail = '', total = this.total): void {
    this.done = Math.min(done, total);
    this.total = total;
    const fraction = this.total > 0 ? this.done / this.total : 1;
    const line = `${this.label} ${this.done}/${this.total}${detail ? `  ${detail}` : ''}  ${this.elapsed()}`;
    if (this.ctx.interactive && process.stderr.isTTY) {
      const filled = Math.round(fraction * WIDTH);
      process.stderr.write(`\r\x1b[K[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${line}`);
      this.redrawn = true;
      return;
    }
    const bucket = Math.floor((fraction * 100) / this.stepPercent);
    if (bucket > this.lastPrinted) {
      this.lastPrinted = bucket;
      this.ctx.err(
        `${this.label} ${Math.round(fraction * 100)}% (${this.done}/${this.total})${detail ? `  ${detail}` : ''}`,
      );
    }
  }

  /** Ends the bar's line on a terminal. */
  finish(): void {
    if (this.redrawn) process.stderr.write('\n');
    this.redrawn = false;
  }

  private elapsed(): string {
    const s = (performance.now() - this.started) / 1000;
    return s < 60 ? `${s.toFixed(0)}s` : `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  }
}
