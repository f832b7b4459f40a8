// Text of an HTML fragment as a reader sees it (a line break between blocks), and the word 4-gram shingle measure of
// the article extraction benchmarks (scrapinghub/article-extraction-benchmark's evaluate.py, ported).
import { parseHTML } from 'linkedom';

interface TextNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<unknown>;
}

const BLOCK =
  /^(?:p|div|section|article|aside|nav|h[1-6]|li|ul|ol|blockquote|pre|table|tr|td|th|figure|figcaption|dl|dt|dd|br|hr|header|footer|main|form)$/;

/** Text of a node with block elements on lines of their own (textContent glues "end.</p><p>Next" together). */
export function nodeText(root: unknown): string {
  const out: string[] = [];
  const walk = (node: TextNode) => {
    if (node.nodeType === 3) {
      out.push(node.textContent ?? '');
      return;
    }
    if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
    const name = node.nodeName.toLowerCase();
    if (name === 'script' || name === 'style' || name === 'noscript' || name === 'template') return;
    const block = BLOCK.test(name);
    if (block) out.push('\n');
    for (const child of Array.from(node.childNodes)) walk(child as TextNode);
    if (block) out.push('\n');
  };
  walk(root as TextNode);
  return out
    .join('')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

export function fragmentText(html: string): string {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`) as unknown as {
    document: { body: unknown };
  };
  return nodeText(document.body);
}

const TOKEN = /[\p{L}\p{N}_]+/gu;

function shingles(text: string, n = 4): Map<string, number> {
  const tokens = text.match(TOKEN) ?? [];
  const counts = new Map<string, number>();
  for (let i = 0; i < Math.max(1, tokens.length - n + 1); i++) {
    const key = tokens.slice(i, i + n).join(' ');
    if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export interface Overlap {
  /** Shares of true positives, false positives and false negatives, normalized so long pages weigh no more. */
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

export function shingleOverlap(expected: string, actual: string): Overlap {
  const want = shingles(expected);
  const got = shingles(actual);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const key of new Set([...want.keys(), ...got.keys()])) {
    const w = want.get(key) ?? 0;
    const g = got.get(key) ?? 0;
    tp += Math.min(w, g);
    fp += Math.max(0, g - w);
    fn += Math.max(0, w - g);
  }
  const sum = tp + fp + fn;
  if (sum > 0) [tp, fp, fn] = [tp / sum, fp / sum, fn / sum];
  const precision = fp === 0 && fn === 0 ? 1 : tp === 0 && fp === 0 ? 0 : tp / (tp + fp);
  const recall = fp === 0 && fn === 0 ? 1 : tp === 0 && fn === 0 ? 0 : tp / (tp + fn);
  return { tp, fp, fn, precision, recall };
}

/** White space and case do not matter when looking for a snippet. */
export function normalizeSnippet(text: string): string {
  return text
    .replace(/[\s\u00a0\u200b]+/g, ' ')
    .trim()
    .toLowerCase();
}
