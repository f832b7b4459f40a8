// What every benchmark returns and how run.ts prints it: one row per measurement, with its target when the issue
// sets one. Benchmarks report; they never fail a run for missing a target (the machine is shared and noisy).

export type Verdict = 'meets' | 'misses' | '';

export interface Row {
  bench: string;
  case: string;
  result: string;
  /** The target as the issue states it, e.g. ">= 150x". */
  target?: string;
  verdict?: Verdict;
  note?: string;
}

export const MODELS = ['article-audio-1-mini', 'article-audio-1-pro', 'article-podcast-1-pro'] as const;
export type ModelId = (typeof MODELS)[number];
export const ARTICLES = ['short', 'medium', 'long'] as const;
export type ArticleName = (typeof ARTICLES)[number];

export interface BenchOptions {
  /** A smaller, faster run: the short and medium articles, fewer samples. */
  quick: boolean;
  models: readonly ModelId[];
  articles: readonly ArticleName[];
  progress: (message: string) => void;
  /** The extraction benchmark's development set (`--pages DIR`), its sources (`--sources sh,moz`), a per-page log. */
  pages?: string;
  sources?: string[];
  details?: string;
  /** Only the pages of this size (`--min-kb 100 --max-kb 200`); the timing rows are over the same window. */
  minKb?: number;
  maxKb?: number;
}

export interface Bench {
  /** Used to select it: `npm run bench -- speed`. */
  name: string;
  title: string;
  run(options: BenchOptions): Promise<Row[]>;
}

export const shortModel = (model: string) =>
  model.replace(/^article-(audio|podcast)-1-/, (_, kind: string) => (kind === 'podcast' ? 'podcast-' : ''));

export function atLeast(value: number, target: number): Verdict {
  return value >= target ? 'meets' : 'misses';
}

export function below(value: number, target: number): Verdict {
  return value < target ? 'meets' : 'misses';
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function formatTable(rows: readonly Row[]): string {
  const header = ['Benchmark', 'Case', 'Result', 'Target', 'vs target', 'Note'];
  const body = rows.map((r) => [
    r.bench,
    r.case,
    r.result,
    r.target ?? '',
    r.verdict === 'meets' ? 'meets' : r.verdict === 'misses' ? 'MISSES' : '',
    r.note ?? '',
  ]);
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => escape(row[i]!).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => escape(c).padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}
