// Highlights the sentence being spoken in the editor showing the document a job came from (selection and document
// jobs), and inside it the word being spoken when the transcript has word timings (issue 26). Sentence and word
// positions are worked out once per document version (matchCues), so following along costs one lookup per sentence
// or word.
import * as vscode from 'vscode';
import type { JobRecord } from '../jobs/types';
import { type CueSpan, matchCues, pieceWordRanges } from './text-match';
import type { CueWord } from './transcript';

interface Source {
  uri: string;
  /** Where a selection job's text started, so matching does not begin at the top of the file. */
  range?: NonNullable<JobRecord['source']['range']>;
  cueTexts: string[];
  /** Per cue, per timed piece of its text (TranscriptCue.words): the range of the cue's words it holds. */
  pieces: ([number, number][] | undefined)[];
}

export class ReadAlong implements vscode.Disposable {
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    // Only high-contrast themes define this border colour; elsewhere it draws nothing.
    borderColor: new vscode.ThemeColor('editor.findMatchHighlightBorder'),
    borderStyle: 'solid',
    borderWidth: '1px',
    borderRadius: '2px',
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.findMatchForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Center,
  });
  /** The word being spoken, inside the sentence's highlight: the colour of the current find match, and underlined. */
  private readonly wordDecoration = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchBackground'),
    borderColor: new vscode.ThemeColor('editor.findMatchBorder'),
    borderStyle: 'solid',
    borderWidth: '0 0 2px 0',
    textDecoration: 'underline',
  });
  private readonly disposables: vscode.Disposable[] = [this.decoration, this.wordDecoration];
  private source: Source | undefined;
  private cue = -1;
  private word = -1;
  private cache: { version: number; spans: (CueSpan | undefined)[] } | undefined;
  /** The range last shown per editor, to scroll only editors whose reader is following along. */
  private readonly shown = new WeakMap<vscode.TextEditor, vscode.Range>();

  constructor() {
    this.disposables.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.apply(false)),
      vscode.workspace.onDidCloseTextDocument((document) => {
        if (document.uri.toString() === this.source?.uri) this.cache = undefined;
      }),
    );
  }

  /** Follows this job from now on (undefined: none, or a job without a source document). */
  follow(job: JobRecord | undefined, cues: readonly { text: string; words?: CueWord[] }[]): void {
    this.clear();
    this.source = job?.source.documentUri
      ? {
          uri: job.source.documentUri,
          range: job.source.range,
          cueTexts: cues.map((cue) => cue.text),
          pieces: cues.map((cue) => (cue.words ? pieceWordRanges(cue.words.map((w) => w.text)) : undefined)),
        }
      : undefined;
    this.cache = undefined;
    this.cue = -1;
    this.word = -1;
  }

  showCue(index: number): void {
    if (index === this.cue) return;
    this.cue = index;
    this.word = -1;
    this.apply(true);
  }

  /** The word being spoken: piece `word` of cue `cue`'s words (-1: none). */
  showWord(cue: number, word: number): void {
    if (cue !== this.cue) this.showCue(cue);
    if (word === this.word) return;
    this.word = word;
    this.applyWord();
  }

  /** The document range of the current word, if the document is open and its sentence was found in it. */
  currentWordRange(document: vscode.TextDocument): vscode.Range | undefined {
    const words = this.spansFor(document)[this.cue]?.words;
    const range = this.source?.pieces[this.cue]?.[this.word];
    if (!words || !range || range[1] <= range[0]) return undefined;
    const first = words[range[0]];
    const last = words[range[1] - 1];
    return first && last
      ? new vscode.Range(document.positionAt(first.start), document.positionAt(last.end))
      : undefined;
  }

  /** The document range of the current sentence, if the document is open and the sentence was found in it. */
  currentRange(document: vscode.TextDocument): vscode.Range | undefined {
    const span = this.spansFor(document)[this.cue];
    return span ? new vscode.Range(document.positionAt(span.start), document.positionAt(span.end)) : undefined;
  }

  get sourceUri(): vscode.Uri | undefined {
    return this.source ? vscode.Uri.parse(this.source.uri) : undefined;
  }

  clear(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      editor.setDecorations(this.decoration, []);
      editor.setDecorations(this.wordDecoration, []);
    }
  }

  private applyWord(): void {
    const source = this.source;
    if (!source) return;
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() !== source.uri) continue;
      const range = this.currentWordRange(editor.document);
      editor.setDecorations(this.wordDecoration, range ? [range] : []);
    }
  }

  private apply(scroll: boolean): void {
    const source = this.source;
    if (!source) return;
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() !== source.uri) continue;
      const range = this.currentRange(editor.document);
      editor.setDecorations(this.decoration, range ? [range] : []);
      const word = this.currentWordRange(editor.document);
      editor.setDecorations(this.wordDecoration, word ? [word] : []);
      if (!range) continue;
      const previous = this.shown.get(editor);
      this.shown.set(editor, range);
      // Scroll only while the reader is following: the last sentence was on screen (or nothing was shown yet).
      const following =
        !previous || editor.visibleRanges.some((visible) => visible.intersection(previous) !== undefined);
      if (scroll && following) editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }

  private spansFor(document: vscode.TextDocument): (CueSpan | undefined)[] {
    const source = this.source;
    if (!source) return [];
    if (this.cache?.version === document.version) return this.cache.spans;
    const text = document.getText();
    const start = source.range
      ? document.offsetAt(new vscode.Position(source.range.startLine, source.range.startCharacter))
      : 0;
    // Search on to the end of the file, not only to the end of the selection: the text may have grown since.
    const spans = matchCues(text, source.cueTexts, { start, end: text.length });
    this.cache = { version: document.version, spans };
    return spans;
  }

  dispose(): void {
    this.clear();
    for (const disposable of this.disposables) disposable.dispose();
  }
}
