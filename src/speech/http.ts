// undici, the HTTP client of the speech pipeline's outbound requests (pages to read, provider voices), loaded at its
// first use: evaluating it costs some 45 ms of CPU, which every engine start paid although most engines (the
// extension's, for a selection or a document) never fetch anything. `require`, not `import()`: the bundle defers a
// required module's evaluation (as parse-worker.ts does), and the callers stay synchronous where they were.
import type * as Undici from 'undici';

let undici: typeof Undici | undefined;

export function http(): typeof Undici {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  undici ??= require('undici') as typeof Undici;
  return undici;
}
