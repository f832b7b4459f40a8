// Where a pipeline worker's script is: beside the bundle in dist/ (`<name>.js`), or the TypeScript source when tests
// run the sources through tsx (then the worker registers tsx's require hook before loading the .ts file).
import { existsSync } from 'node:fs';
import path from 'node:path';

export function workerScript(name: string): { script: string; evaluate: boolean } {
  if (__filename.endsWith('.ts')) {
    const source = path.join(__dirname, `${name}.ts`);
    return { script: `require('tsx/cjs'); require(${JSON.stringify(source)});`, evaluate: true };
  }
  const script = path.join(__dirname, `${name}.js`);
  if (!existsSync(script))
    throw new Error(`A part of the engine is missing (${script}). Reinstall the extension or run npm run build.`);
  return { script, evaluate: false };
}
