/** A line longer than this is not the text we read (ip_vs lines are ~100 bytes): stop, do not buffer it whole. */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * Cuts a stream of text into lines for `onLine`. Only each new chunk is searched for newlines:
 * searching the buffered text again made input without newlines quadratic (minutes of CPU for
 * 256 MB, blocking the event loop past every timeout).
 */
export class LineSplitter {
  private pending = "";
  constructor(private readonly onLine: (line: string) => void) {}

  /** Feeds a chunk; false when the current line has grown past MAX_LINE_BYTES. */
  push(chunk: string): boolean {
    let start = 0;
    let nl = chunk.indexOf("\n");
    if (nl >= 0) {
      this.onLine(this.pending + chunk.slice(0, nl));
      this.pending = "";
      start = nl + 1;
      while ((nl = chunk.indexOf("\n", start)) >= 0) {
        this.onLine(chunk.slice(start, nl));
        start = nl + 1;
      }
    }
    this.pending += chunk.slice(start);
    return this.pending.length <= MAX_LINE_BYTES;
  }

  /** Hands over a last line without a newline, if any. */
  end(): void {
    if (this.pending.length > 0) this.onLine(this.pending);
    this.pending = "";
  }
}
