// What `article-audio convert` shows while a job runs. On a terminal: one bar line that updates in place, with the
// job's log lines printed above it. Elsewhere (a pipe, a CI log): plain lines, progress every 10 %.
import { boundedLogLine } from '../api/index';
import type { JobEvent } from '../api/types';

const BAR_WIDTH = 24;

export class ProgressDisplay {
  private status = 'submitting';
  private progress = 0;
  private lastMessage = '';
  private lastPlainStep = -1;
  private barShown = false;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly interactive = Boolean(out.isTTY),
  ) {}

  /** Shows one event of the job. */
  show(event: JobEvent): void {
    switch (event.type) {
      case 'status':
        if (event.status !== this.status) {
          this.status = boundedLogLine(event.status).slice(0, 40);
          if (!this.interactive) this.out.write(`status: ${this.status}\n`);
        }
        if (typeof event.progress === 'number') this.progress = Math.max(this.progress, event.progress);
        this.plainProgress();
        break;
      case 'log':
        if (event.level === 'debug') return;
        // The engine's closing line of a failed job ("Failed (fetch_failed): …") is the command's own last line.
        if (event.level === 'error' && /^Failed \([\w-]+\): /.test(event.message)) return;
        this.lastMessage = event.message;
        this.line(`${event.level === 'info' ? '' : `${event.level}: `}${event.message}`);
        break;
      case 'transport':
        if (event.mode === 'poll')
          this.line(`(following the job by polling${event.reason ? `: ${event.reason}` : ''})`);
        break;
      case 'unreachable':
        this.line(`${event.message} Still trying (next in ${Math.round(event.retryInMs / 1000)} s).`);
        break;
      case 'result':
        // A part of the audio is announced while the job runs: only the final result is the whole.
        if (!event.part) this.progress = 1;
        break;
      case 'end':
        this.status = boundedLogLine(event.job.status).slice(0, 40);
        if (event.job.status === 'succeeded') this.progress = 1;
        this.plainProgress();
        break;
    }
    this.drawBar();
  }

  /** A line of the command's own (not from the job). */
  note(message: string): void {
    this.line(message);
    this.drawBar();
  }

  /** Removes the bar, leaving the terminal clean for the final message. */
  finish(): void {
    if (this.interactive && this.barShown) this.out.write('\r\x1b[2K');
    this.barShown = false;
  }

  private line(text: string): void {
    if (this.interactive && this.barShown) this.out.write('\r\x1b[2K');
    // Text from the service never reaches the terminal as escape sequences, nor as more than one line.
    this.out.write(`${boundedLogLine(text)}\n`);
    this.barShown = false;
  }

  private plainProgress(): void {
    if (this.interactive) return;
    const step = Math.floor(this.progress * 10);
    if (step > this.lastPlainStep && this.progress > 0) {
      this.lastPlainStep = step;
      this.out.write(`progress: ${Math.round(this.progress * 100)}%\n`);
    }
  }

  private drawBar(): void {
    if (!this.interactive) return;
    const filled = Math.round(this.progress * BAR_WIDTH);
    const percent = `${Math.round(this.progress * 100)}%`.padStart(4);
    const head = `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${percent} ${this.status}`;
    const room = (this.out.columns || 80) - head.length - 3;
    const tail = room > 10 && this.lastMessage ? ` · ${truncate(this.lastMessage, room)}` : '';
    this.out.write(`\r\x1b[2K${head}${tail}`);
    this.barShown = true;
  }
}

function truncate(text: string, width: number): string {
  const single = text.replace(/\s+/g, ' ');
  return single.length <= width ? single : `${single.slice(0, width - 1)}…`;
}
