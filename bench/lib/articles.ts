// The fixed articles every engine benchmark uses (test/fixtures/articles): short, medium and about 100,000 characters.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ArticleName } from './report';

export const repoRoot = path.resolve(__dirname, '..', '..');

export function articleText(name: ArticleName): string {
  return readFileSync(path.join(repoRoot, 'test', 'fixtures', 'articles', `${name}.md`), 'utf8');
}
