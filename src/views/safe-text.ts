// Outside text (page titles, URLs, redirect targets, a service's error messages, file names) on its way into VS Code's
// UI. A notification renders `[label](command:id?args)` in its message as a link that runs any command with any
// arguments, a Markdown tooltip renders links and HTML, and labels render `$(icon)`: each kind of place has one
// function here, and every string that did not come from this extension passes through the one that fits.
// Plain TypeScript, no vscode import, so it is unit-tested in plain Node (test/unit/views/safe-text.test.ts).

/** Longest notification message shown; a hostile service may send megabytes. */
export const MAX_MESSAGE_LENGTH = 1500;

const ZERO_WIDTH_SPACE = '\u200b';

// C0/C1 controls (except tab and newline) and the bidirectional overrides that can make text read other than it is.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text for a notification (showInformationMessage & co.): VS Code turns `[label](https:… | command:… | file:…)` into
 * a link there (its `parseLinkedText`); there is no escape, so the pattern is broken: `](` becomes `] (`, and
 * `command:` gets a zero-width space before its colon, so that no two pieces joined later can form a link either.
 * Also drops control and bidi-override characters and caps the length.
 */
export function plainMessage(text: string): string {
  let out = String(text).replace(INVISIBLE, '');
  if (out.length > MAX_MESSAGE_LENGTH) out = `${out.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
  return out.replace(/\]\s*\(/g, '] (').replace(/\b(command|file)(\s*):/gi, `$1$2${ZERO_WIDTH_SPACE}:`);
}

/**
 * Text for a label that renders `$(icon)` (quick pick items, the status bar text): the icon syntax is broken with a
 * zero-width space, and control characters are dropped.
 */
export function plainLabel(text: string): string {
  return String(text).replace(INVISIBLE, '').replace(/\$\(/g, `$${ZERO_WIDTH_SPACE}(`);
}

/**
 * Text for a MarkdownString: every ASCII punctuation character is backslash-escaped (CommonMark allows that for all
 * of them), so the text can form no link, autolink, image, HTML, emphasis or block; line breaks become spaces (inline
 * text only), and `$(icon)` is broken as in plainLabel.
 */
export function escapeMarkdown(text: string): string {
  return plainLabel(text)
    .replace(/\s+/g, ' ')
    .replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

/**
 * A Markdown link that runs one of our commands with these arguments (for a tooltip whose isTrusted allows that
 * command): the arguments are JSON, percent-encoded with the characters encodeURIComponent leaves (`(`, `)` and
 * the like), so that an argument from outside (a job id) cannot close the link and start another.
 */
export function commandLink(label: string, command: string, args: unknown[]): string {
  const query = encodeURIComponent(JSON.stringify(args)).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `[${label}](command:${command}?${query})`;
}
