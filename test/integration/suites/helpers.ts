// Shared by the integration suites: the extension's API, settings, and waiting for jobs.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ArticleAudioApi } from '../../../src/extension';
import type { JobRecord } from '../../../src/jobs/types';

export const EXTENSION_ID = 'article-audio.article-audio';

export async function extensionApi(): Promise<ArticleAudioApi> {
  const extension = vscode.extensions.getExtension<ArticleAudioApi>(EXTENSION_ID);
  assert.ok(extension, `extension ${EXTENSION_ID} is not installed in this VS Code`);
  return extension.activate();
}

export async function setSetting(section: string, key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration(section).update(key, value, vscode.ConfigurationTarget.Global);
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves with the job once it succeeded (files cached) or failed. */
export function waitForEnd(api: ArticleAudioApi, id: string, timeoutMs = 120_000): Promise<JobRecord> {
  return waitFor(
    `job ${id} to end`,
    () => {
      const job = api.jobs.get(id);
      if (!job) return undefined;
      return (job.status === 'succeeded' && job.files) || job.status === 'failed' ? structuredClone(job) : undefined;
    },
    timeoutMs,
  );
}

/** Paragraphs of plain prose, long enough for a few seconds of audio. */
export function article(title: string, paragraphs = 3): string {
  const body = [
    'Rivers shape the land they cross. Over thousands of years, water carves valleys, moves sand and builds wide plains where towns later grow.',
    'People have always settled near rivers. They bring water for fields, fish for food, and a road for boats long before there were railways.',
    'Today many rivers are managed with dams and locks. These bring power and safe shipping, but they also change how fish travel and how silt reaches the sea.',
    'Scientists now measure rivers with satellites. They can see floods early and help cities prepare before the water arrives.',
  ];
  return `# ${title}\n\n${Array.from({ length: paragraphs }, (_, i) => body[i % body.length]).join('\n\n')}\n`;
}
