// Runs of characters without a space that are not words: a hash, a key, a base64 blob, a minified line, a
// 50,000-digit number. Spelled out they take minutes to say and mean nothing to a listener; the Markdown parser is
// also quadratic on some of them ("a_a_a_…", "a.a.a.…@b" took 70 and 130 s at 100,000 characters). So a run is
// shortened before parsing, said as "a long code" (or "a long number"), and a text made of nothing else is refused.
// The rule for what a long run is lives with the submission rules (src/protocol/text.ts): a text made only of
// such runs is refused there, and a page made only of them fails in the pipeline with the same words.
// Every scan here is one pass of /\S+/g, which never backtracks: linear in the length of the text.

import { isLongRun } from '../../../protocol/text';

/** Longer than this, a run is cut to its ends before the parser sees it (long link targets keep their host). */
const SHORTEN_RUNS_OVER = 256;
const KEEP_HEAD = 100;
const KEEP_TAIL = 40;

/**
 * Every run of non-space characters longer than 256 becomes its first 100 and last 40 characters around "…"; links
 * too (the parser is as slow on them, and the host is at the start), text in scripts written without spaces not.
 */
export function shortenLongRuns(text: string): string {
  return text.replace(/\S+/g, (run) =>
    run.length > SHORTEN_RUNS_OVER && (isLongRun(run) || /^(?:https?:\/\/|www\.)/i.test(run))
      ? `${run.slice(0, KEEP_HEAD)}…${run.slice(-KEEP_TAIL)}`
      : run,
  );
}

const OPENING = new Set(['(', '[', '"', '“', "'"]);
const CLOSING = new Set([')', ']', '"', '”', "'", '.', ',', ';', ':', '!', '?']);

/** A long token in the spoken words; punctuation around it (a sentence's period, brackets) is kept. */
export function sayLongTokens(text: string): string {
  return text.replace(/\S+/g, (token) => {
    if (token.length < 32) return token;
    // Scanned by hand rather than with a regular expression: a run of punctuation must not cost quadratic time.
    let start = 0;
    while (start < token.length && OPENING.has(token[start]!)) start++;
    let end = token.length;
    while (end > start && CLOSING.has(token[end - 1]!)) end--;
    const core = token.slice(start, end);
    // A hash in hex (a git commit, a SHA-256) is a code too, though shorter than a long run.
    const hash = /^[0-9a-f]{32,}$/i.test(core) && /\d/.test(core) && /[a-f]/i.test(core);
    if (!hash && !isLongRun(core)) return token;
    return `${token.slice(0, start)}${/^[\d…]+$/.test(core) ? 'a long number' : 'a long code'}${token.slice(end)}`;
  });
}
