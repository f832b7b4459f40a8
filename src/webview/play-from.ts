// Play from Here: which sentence of a job the cursor is in. Plain TypeScript with no vscode import (unit-tested in
// plain Node); the spans come from matchCues (text-match.ts).
import type { TextSpan } from './text-match';

/**
 * The cue to play from for a cursor at `offset`: the sentence that contains it, or the next spoken one after it (the
 * cursor on a heading's `#`, in a code block or between paragraphs). Undefined when the cursor is outside the job's
 * text: before `regionStart` (a selection job that starts later) or after its last sentence.
 */
export function cueAtOffset(
  spans: readonly (TextSpan | undefined)[],
  offset: number,
  regionStart = 0,
): number | undefined {
  if (offset < regionStart) return undefined;
  for (let index = 0; index < spans.length; index++) {
    const span = spans[index];
    if (span && offset < span.end) return index;
  }
  return undefined;
}

/**
 * Where the sentence at `offset` starts: after the last sentence end (. ! ? and closing quotes or brackets, then a
 * space) on its line before the offset, else at the line's first word.
 */
export function sentenceStart(text: string, offset: number): number {
  const lineStart = text.lastIndexOf('\n', Math.max(0, offset - 1)) + 1;
  const before = text.slice(lineStart, offset);
  let start = 0;
  for (const match of before.matchAll(/[.!?]["'”’)\]]*\s+/g)) start = (match.index ?? 0) + match[0].length;
  return lineStart + start;
}
