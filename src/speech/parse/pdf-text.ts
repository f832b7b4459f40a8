// A local PDF's text for a client that has no URL to give the service (the extension's Convert Document, the CLI's
// `convert file.pdf`): read by the engine's own PDF reader in a parse worker thread with the engine's time and memory
// limits, so a hostile or huge PDF stops there as one fetched by URL does in the engine. Callers load this module
// only when a PDF is converted: pdf.js (in the parse worker's bundle) and the runner are not needed otherwise.
import { articleSource } from '../source/article';
import { PipelineError } from '../types';
import { ParseRunner } from './parse-runner';

/**
 * The PDF's title (when it names one) and its text as Markdown, headings kept; or the problem that stopped the read
 * (unreadable, encrypted, no text, too complex: the engine's `PipelineError` message). Other errors are thrown.
 */
export async function readPdfText(
  bytes: Uint8Array,
  label: string,
  signal: AbortSignal,
): Promise<{ title?: string; text: string } | { problem: string }> {
  try {
    const { article } = await new ParseRunner().readPdf(bytes, label, signal);
    return { ...(article.title ? { title: article.title } : {}), text: articleSource(article) };
  } catch (error) {
    if (error instanceof PipelineError) return { problem: error.message };
    throw error;
  }
}
