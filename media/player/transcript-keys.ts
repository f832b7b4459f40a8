// The transcript by keyboard: one Tab stop for all its sentences (a roving tabindex, on the sentence being spoken
// until the reader moves it), the arrow keys, Home and End move between sentences, Enter plays from the one focused.
// Works on whatever .cue elements the transcript view draws, so it needs no change when the drawing changes.
import { ui } from './page';

const CUE = '.cue[data-index]';

export class TranscriptKeys {
  /** The index of the sentence that holds the Tab stop. */
  private stop = 0;

  /** `onPlay` plays from the sentence at this index. */
  constructor(private readonly onPlay: (index: number) => void) {
    // The transcript is drawn again for each job and as a running job grows: give the new sentences their tabindex.
    new MutationObserver(() => this.refresh()).observe(ui.cues, { childList: true });
    ui.cues.addEventListener('keydown', (event) => this.onKey(event));
    ui.cues.addEventListener('focusin', (event) => {
      const index = indexOf(event.target);
      if (index !== undefined) this.moveStop(index);
    });
  }

  /** The sentence being spoken; the Tab stop follows it while the focus is elsewhere. */
  follow(index: number): void {
    if (index < 0 || ui.cues.contains(document.activeElement)) return;
    this.moveStop(index);
  }

  private cues(): HTMLElement[] {
    return [...ui.cues.querySelectorAll<HTMLElement>(CUE)];
  }

  private refresh(): void {
    const cues = this.cues();
    if (this.stop >= cues.length) this.stop = 0;
    cues.forEach((cue, i) => {
      cue.tabIndex = i === this.stop ? 0 : -1;
    });
  }

  private moveStop(index: number): void {
    if (index === this.stop) return;
    const cues = this.cues();
    const target = cues[index];
    if (!target) return;
    const old = cues[this.stop];
    if (old) old.tabIndex = -1;
    target.tabIndex = 0;
    this.stop = index;
  }

  private onKey(event: KeyboardEvent): void {
    const index = indexOf(event.target);
    if (index === undefined || event.ctrlKey || event.metaKey || event.altKey) return;
    const cues = this.cues();
    let to: number | undefined;
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowRight':
        to = Math.min(cues.length - 1, index + 1);
        break;
      case 'ArrowUp':
      case 'ArrowLeft':
        to = Math.max(0, index - 1);
        break;
      case 'Home':
        to = 0;
        break;
      case 'End':
        to = cues.length - 1;
        break;
      case 'Enter':
        event.preventDefault();
        this.onPlay(index);
        return;
      default:
        // Space and the other keys are the player's (Space plays or pauses).
        return;
    }
    // Handled here: the page's own keys (arrows skip and step sentences) do not act on it as well.
    event.preventDefault();
    this.moveStop(to);
    cues[to]?.focus();
  }
}

function indexOf(target: EventTarget | null): number | undefined {
  if (!(target instanceof HTMLElement) || !target.matches(CUE)) return undefined;
  const index = Number(target.dataset.index);
  return Number.isInteger(index) ? index : undefined;
}
