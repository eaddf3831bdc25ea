import { colourOn } from "./output.js";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * Progress of a long-running command on stderr: plain lines that stay, and, on a terminal only, a
 * live status line kept under them (redrawn every second, erased before each line). Piped or
 * redirected, only the plain lines are written, so logs stay clean.
 */
export class StatusLine {
  private readonly live: boolean;
  private readonly timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private shown = false;

  constructor(
    private readonly status: () => string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.live = stream.isTTY === true;
    if (this.live) {
      this.timer = setInterval(() => this.draw(), 1000);
      this.timer.unref();
    }
  }

  /** A line that stays, on `out` (default: the status stream). */
  line(text: string, out: NodeJS.WriteStream = this.stream): void {
    this.erase();
    out.write(`${text}\n`);
    this.draw();
  }

  /** Redraw the status now (after what it shows changed). */
  draw(): void {
    if (!this.live) return;
    // A pseudo-terminal may report 0 columns: assume 80 then.
    const width = Math.max(10, (this.stream.columns || 80) - 1);
    const text = `${SPINNER[this.frame++ % SPINNER.length]} ${this.status()}`;
    const cut = text.length > width ? `${text.slice(0, width - 1)}…` : text;
    this.stream.write(`\r\u001b[K${colourOn(this.stream) ? `\u001b[2m${cut}\u001b[22m` : cut}`);
    this.shown = true;
  }

  /** Erase the status line and stop redrawing it. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.erase();
  }

  private erase(): void {
    if (!this.shown) return;
    this.stream.write("\r\u001b[K");
    this.shown = false;
  }
}
