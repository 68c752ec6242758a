/**
 * Captured guest output with a byte cap. Once the cap is reached further writes are only counted,
 * so a print loop cannot grow host memory; the text ends with a marker saying how much was dropped.
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class OutputBuffer {
  private parts: string[] = [];
  private bytes = 0;
  private dropped = 0;

  constructor(private readonly maxBytes: number) {}

  /** True once the cap is reached: later output is only counted (see `drop`). */
  get full(): boolean {
    return this.dropped > 0 || this.bytes >= this.maxBytes;
  }

  write(line: string): void {
    const chunk = line + '\n';
    const size = encoder.encode(chunk).length;
    if (this.dropped === 0 && this.bytes + size <= this.maxBytes) {
      this.parts.push(chunk);
      this.bytes += size;
      return;
    }
    if (this.dropped === 0) {
      // Keep the head of the chunk that crosses the cap (cut on a character boundary).
      const room = this.maxBytes - this.bytes;
      const head = decoder.decode(encoder.encode(chunk).subarray(0, room)).replace(/\uFFFD$/, '');
      const headBytes = encoder.encode(head).length;
      this.parts.push(head);
      this.bytes += headBytes;
      this.dropped += size - headBytes;
      return;
    }
    this.dropped += size;
  }

  /** Count output that was never handed over (cut in the guest, or written once full). */
  drop(size: number): void {
    if (size > 0) this.dropped += size;
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  text(): string {
    const body = this.parts.join('');
    return this.dropped > 0 ? `${body}\n...[output truncated: ${this.dropped} more bytes]` : body;
  }
}
