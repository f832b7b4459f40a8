// Reads a node's GET /metrics (Prometheus text format) into samples a test can look up by name and labels.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  if (!/^text\/plain/.test(response.headers.get('content-type') ?? ''))
    throw new Error(`${url} is not Prometheus text: ${response.headers.get('content-type')}`);
  return parseMetrics(await response.text());
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`Not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the sample with this name whose labels include `labels` (0 when there is none). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  return found.reduce((sum, s) => sum + s.value, 0);
}

/** Whether a sample of this name exists at all. */
export function has(samples: Sample[], name: string): boolean {
  return samples.some((s) => s.name === name);
}
