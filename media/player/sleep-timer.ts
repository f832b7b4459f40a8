// The sleep timer: off, at the end of this article (the listening queue does not go on), or after some minutes of
// listening (the last seconds fade out, then playback pauses). It lives as long as the page, so it carries on when
// the player switches to another job. Its state is said to screen readers through the page's live region.
import {
  MAX_SLEEP_MINUTES,
  SLEEP_MINUTES,
  type SleepChoice,
  SleepCountdown,
  parseSleepChoice,
} from '../../src/webview/player-controls';
import { announce, ui } from './page';

const TICK_MS = 250;

export class SleepTimer {
  private mode: SleepChoice['kind'] = 'off';
  private countdown: SleepCountdown | undefined;
  private interval: ReturnType<typeof setInterval> | undefined;
  private lastTick = 0;
  /** The listener's volume while the fade lowers it (set only while fading). */
  private baseVolume: number | undefined;

  constructor(private readonly audio: HTMLAudioElement) {
    const options: [string, string][] = [
      ['off', 'Off'],
      ['end', 'End of article'],
      ...SLEEP_MINUTES.map((minutes): [string, string] => [String(minutes), `${minutes} min`]),
      ['custom', 'Minutes…'],
    ];
    for (const [value, label] of options) ui.sleep.add(new Option(label, value));
    ui.sleep.value = 'off';
    ui.sleepMinutes.max = String(MAX_SLEEP_MINUTES);
    ui.sleep.addEventListener('change', () => {
      if (ui.sleep.value === 'custom') {
        ui.sleepMinutes.hidden = false;
        ui.sleepMinutes.focus();
        return;
      }
      const choice = parseSleepChoice(ui.sleep.value);
      if (choice) this.set(choice);
    });
    ui.sleepMinutes.addEventListener('change', () => this.setCustom());
    ui.sleepMinutes.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return;
      event.preventDefault();
      this.setCustom();
    });
    // A pause by hand during the fade gives the volume back; playing again fades from there.
    audio.addEventListener('pause', () => {
      if (this.countdown && !this.countdown.done) this.restoreVolume();
    });
  }

  /** Playback stops when this article ends, and the queue does not go on. */
  get endsWithArticle(): boolean {
    return this.mode === 'end';
  }

  /** While the fade lowers the volume (that volume is not the listener's setting, so it is not saved). */
  get fading(): boolean {
    return this.baseVolume !== undefined;
  }

  /** The article played to its end. */
  articleEnded(): void {
    if (this.mode !== 'end') return;
    this.set({ kind: 'off' }, false);
    announce('Sleep timer: stopped at the end of the article');
  }

  private setCustom(): void {
    const choice = parseSleepChoice(ui.sleepMinutes.value);
    if (choice?.kind === 'minutes') this.set(choice);
    else announce(`Sleep timer: enter a number of minutes from 1 to ${MAX_SLEEP_MINUTES}`);
  }

  private set(choice: SleepChoice, say = true): void {
    this.restoreVolume();
    if (this.interval !== undefined) clearInterval(this.interval);
    this.interval = undefined;
    this.mode = choice.kind;
    this.countdown = choice.kind === 'minutes' ? new SleepCountdown(choice.minutes) : undefined;
    if (choice.kind !== 'minutes' || ui.sleep.value !== 'custom') {
      ui.sleep.value = choice.kind === 'minutes' ? String(choice.minutes) : choice.kind;
      ui.sleepMinutes.hidden = true;
    }
    if (this.countdown) {
      this.lastTick = performance.now();
      this.interval = setInterval(() => this.tick(), TICK_MS);
    }
    this.show();
    if (!say) return;
    if (choice.kind === 'off') announce('Sleep timer off');
    else if (choice.kind === 'end') announce('Sleep timer: playback stops at the end of this article');
    else announce(`Sleep timer: playback stops after ${choice.minutes} minutes of listening`);
  }

  private tick(): void {
    const countdown = this.countdown;
    if (!countdown) return;
    const now = performance.now();
    const elapsed = (now - this.lastTick) / 1000;
    this.lastTick = now;
    // Only time spent listening counts.
    if (this.audio.paused) return;
    countdown.tick(elapsed);
    if (countdown.done) {
      this.audio.pause();
      this.set({ kind: 'off' }, false);
      announce('Sleep timer: paused');
      return;
    }
    if (countdown.fading) {
      if (this.baseVolume === undefined) {
        this.baseVolume = this.audio.volume;
        announce('Sleep timer: fading out');
      }
      this.audio.volume = this.baseVolume * countdown.volumeFactor();
    }
    this.show();
  }

  private restoreVolume(): void {
    if (this.baseVolume === undefined) return;
    const volume = this.baseVolume;
    this.audio.volume = volume;
    this.baseVolume = undefined;
  }

  private show(): void {
    const text = this.mode === 'end' ? 'at article end' : this.countdown ? `${this.countdown.label()} left` : '';
    ui.sleepLeft.textContent = text;
    ui.sleepLeft.hidden = text === '';
  }
}
