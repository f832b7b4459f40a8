// Where a pipeline worker's script is: beside the bundle in dist/ (`<name>.js`), or the TypeScript source when tests
// run the sources through tsx (then the worker registers tsx's require hook before loading the .ts file). The caller
// passes its own __dirname: the workers' sources sit beside the code that starts them (voice/, audio/), not here.
import { existsSync } from 'node:fs';
import path from 'node:path';

export function workerScript(name: string, callerDir: string): { script: string; evaluate: boolean } {
  if (__filename.endsWith('.ts')) {
    const source = path.join(callerDir, `${name}.ts`);
    return { script: `require('tsx/cjs'); require(${JSON.stringify(source)});`, evaluate: true };
  }
  const script = path.join(callerDir, `${name}.js`);
  if (!existsSync(script))
    throw new Error(`A part of the engine is missing (${script}). Reinstall the extension or run npm run build.`);
  return { script, evaluate: false };
}
