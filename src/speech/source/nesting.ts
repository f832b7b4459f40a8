// Cheap, linear scans for how deeply a page or a Markdown text nests, run before the real parsers. Readability and
// marked are fine on real articles but slow down quadratically with depth (nested <div>s: 500 deep 0.7 s, 1000 deep
// 2.8 s, 2000 deep 11 s) and marked overflows the stack on ~2000 nested quotes, so hostile depth is refused before
// any parser sees it. The scans only approximate the parsers: they must never undercount a real nesting by much,
// and may ignore what a parser closes by itself.

/** Elements that never have children. */
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'bgsound',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'image',
  'img',
  'input',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
/**
 * Elements whose end tag may be left out (the parser closes them when a sibling opens), plus the document's own
 * frame. Not counting them keeps pages full of unclosed <p> and <li> from looking deep; real nesting of these needs
 * a counted element in between (<ul>, <table>, <div>).
 */
const NOT_COUNTED = new Set([
  'html',
  'head',
  'body',
  'p',
  'li',
  'dt',
  'dd',
  'tr',
  'td',
  'th',
  'thead',
  'tbody',
  'tfoot',
  'colgroup',
  'caption',
  'option',
  'optgroup',
  'rb',
  'rt',
  'rp',
  'rtc',
]);
/** Elements whose content is text up to their end tag, never markup. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext']);

function isAsciiLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/** The tag name starting at `start` (lower case) and where it ends. */
function tagName(html: string, start: number): { name: string; end: number } {
  let end = start;
  while (end < html.length) {
    const code = html.charCodeAt(end);
    // white space, '/', '>'
    if (code === 32 || code === 9 || code === 10 || code === 12 || code === 13 || code === 47 || code === 62) break;
    end++;
  }
  return { name: html.slice(start, end).toLowerCase(), end };
}

/**
 * The deepest element nesting of an HTML document, stopping as soon as it passes `limit` (then it returns a value
 * above the limit). An end tag closes up to its matching open element, as the parser does, and is ignored when no
 * such element is open, so sloppy markup (`<div><span></div>`) does not add up.
 */
export function htmlNestingDepth(html: string, limit = Infinity): number {
  const stack: string[] = [];
  const open = new Map<string, number>();
  let deepest = 0;
  let at = 0;
  for (;;) {
    const lt = html.indexOf('<', at);
    if (lt < 0 || lt + 1 >= html.length) return deepest;
    const next = html.charCodeAt(lt + 1);
    if (next === 33 /* ! */) {
      // A comment runs to -->; a doctype or CDATA to the next >.
      const end = html.startsWith('<!--', lt) ? html.indexOf('-->', lt + 4) : html.indexOf('>', lt + 2);
      if (end < 0) return deepest;
      at = end + 1;
      continue;
    }
    if (next === 47 /* / */ && isAsciiLetter(html.charCodeAt(lt + 2))) {
      const { name, end } = tagName(html, lt + 2);
      at = end;
      if ((open.get(name) ?? 0) > 0) {
        for (;;) {
          const popped = stack.pop()!;
          open.set(popped, open.get(popped)! - 1);
          if (popped === name) break;
        }
      }
      continue;
    }
    if (!isAsciiLetter(next)) {
      at = lt + 1;
      continue;
    }
    const { name, end } = tagName(html, lt + 1);
    at = end;
    if (RAW_TEXT.has(name)) {
      const gt = html.indexOf('>', end);
      if (gt < 0) return deepest;
      const close = html.toLowerCase().indexOf(`</${name}`, gt + 1);
      if (close < 0) return deepest;
      at = close + 2 + name.length;
      continue;
    }
    if (VOID.has(name) || NOT_COUNTED.has(name)) continue;
    stack.push(name);
    open.set(name, (open.get(name) ?? 0) + 1);
    if (stack.length > deepest) {
      deepest = stack.length;
      if (deepest > limit) return deepest;
    }
  }
}

/**
 * The deepest nesting of block quotes and lists in a Markdown text: per line, the `>` and list markers that open it
 * plus, on a list or quote line, its indentation (a nested list item is indented two or more columns per level).
 * Lines inside fenced code blocks are code, however indented.
 */
export function markdownNestingDepth(source: string, limit = Infinity): number {
  let deepest = 0;
  let lineStart = 0;
  let fence: string | undefined;
  while (lineStart < source.length) {
    let lineEnd = source.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = source.length;
    const fenceMatch = /^ {0,3}(`{3,}|~{3,})/.exec(source.slice(lineStart, Math.min(lineEnd, lineStart + 64)));
    if (fence !== undefined || fenceMatch) {
      if (fence === undefined) fence = fenceMatch![1]![0]!;
      else if (fenceMatch && fenceMatch[1]![0] === fence) fence = undefined;
      lineStart = lineEnd + 1;
      continue;
    }
    let depth = 0;
    let indent = 0;
    let i = lineStart;
    let leading = true;
    while (i < lineEnd) {
      const c = source[i]!;
      if (c === ' ' || c === '\t') {
        if (leading) indent += c === '\t' ? 4 : 1;
        i++;
        continue;
      }
      leading = false;
      if (c === '>') {
        depth++;
        i++;
        continue;
      }
      // Bullet (-, *, +) or ordered (1. 1)) list marker, followed by white space or the line's end.
      let j = i;
      if (c === '-' || c === '*' || c === '+') j = i + 1;
      else {
        while (j < lineEnd && j - i < 9 && source.charCodeAt(j) >= 48 && source.charCodeAt(j) <= 57) j++;
        if (j > i && (source[j] === '.' || source[j] === ')')) j++;
        else j = i;
      }
      if (j > i && (j === lineEnd || source[j] === ' ' || source[j] === '\t')) {
        depth++;
        i = j;
        continue;
      }
      break;
    }
    if (depth > 0) depth += Math.floor(indent / 2);
    if (depth > deepest) {
      deepest = depth;
      if (deepest > limit) return deepest;
    }
    lineStart = lineEnd + 1;
  }
  return deepest;
}
