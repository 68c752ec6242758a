/**
 * Coalesces many updates into one callback per animation frame, so a burst of streamed events
 * (metrics, tokens) costs one redraw. Falls back to a 16 ms timer where there is no rAF (Node tests).
 */
export class FrameBatcher {
  private scheduled = false;
  private handle: number | ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly flush: () => void) {}

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.handle = null;
      this.flush();
    };
    this.handle = typeof requestAnimationFrame === 'function' ? requestAnimationFrame(run) : setTimeout(run, 16);
  }

  cancel(): void {
    if (this.handle === null) return;
    if (typeof cancelAnimationFrame === 'function' && typeof this.handle === 'number')
      cancelAnimationFrame(this.handle);
    else clearTimeout(this.handle as ReturnType<typeof setTimeout>);
    this.handle = null;
    this.scheduled = false;
  }
}
