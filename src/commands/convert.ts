// Convert Selection, Convert Document (also several files chosen in the Explorer) and Convert URL: each checks its
// input before any request, asks for the voice, and submits one job per article.
import path from 'node:path';
import * as vscode from 'vscode';
import {
  countCharacters,
  MODEL_IDS,
  modelById,
  type ModelId,
  TEXT_MAX_LENGTH,
  TEXT_MIN_LENGTH,
  textProblem,
  binaryProblem,
  isPdf,
} from '../protocol';

/** Files up to this size are read whole to check that they are text (the file system API has no partial read). */
const BINARY_CHECK_MAX_BYTES = 32 * 1024 * 1024;
import { Commands } from '../command-ids';
import { isHttpUrl, readSettings } from '../config';
import type { NewJob } from '../jobs/job-tracker';
import { splitText } from '../jobs/split-text';
import type { JobRecord } from '../jobs/types';
import { Fixes } from '../notify';
import { sentenceStart } from '../webview/play-from';
import { providerHost, providerReads, readVoiceSettings } from '../connection/voice-settings';
import { modelLabel } from '../views/labels';
import type { CommandContext } from './context';

const LAST_MODEL_KEY = 'articleAudio.lastModel';

type Article = Omit<NewJob, 'modelId' | 'introAudioUrl' | 'outroAudioUrl'>;

export const convertSelection = (ctx: CommandContext) => async (): Promise<JobRecord | undefined> => {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    ctx.notifier.warn('Select the text to convert in an editor first.');
    return undefined;
  }
  const selections = editor.selections.filter((s) => !s.isEmpty);
  if (selections.length === 0) {
    ctx.notifier.warn('Nothing is selected. Select the text to convert, or convert the whole document.', [
      { title: 'Convert Document', run: () => vscode.commands.executeCommand(Commands.convertDocument) },
    ]);
    return undefined;
  }
  const text = selections.map((s) => editor.document.getText(s)).join('\n\n');
  const first = selections[0] ?? editor.selection;
  const article: Article = {
    title: titleOf(text, `Selection from ${path.basename(editor.document.uri.path) || 'editor'}`),
    text,
    source: {
      kind: 'selection',
      documentUri: editor.document.uri.toString(),
      range: {
        startLine: first.start.line,
        startCharacter: first.start.character,
        endLine: first.end.line,
        endCharacter: first.end.character,
      },
    },
  };
  if (countCharacters(text) > TEXT_MAX_LENGTH) return convertInParts(ctx, article, 'The selection');
  if (!checkLength(ctx, text, 'The selection')) return undefined;
  const modelId = await pickModel(ctx.extension);
  if (!modelId) return undefined;
  return submit(ctx, modelId, article);
};

/**
 * Play from Here: listens from the sentence at the cursor (or the start of the selection) of a Markdown or text
 * document. The newest job made from the document plays from that sentence; with none that has it, the document is
 * converted from that sentence to its end, and plays as soon as its first part is in.
 */
export const playFromHere = (ctx: CommandContext) => async (): Promise<JobRecord | undefined> => {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    ctx.notifier.warn('Put the cursor in a Markdown or text document where you want to start listening.');
    return undefined;
  }
  const document = editor.document;
  const offset = sentenceStart(document.getText(), document.offsetAt(editor.selection.start));
  if (await ctx.player.playFrom(document, offset)) return undefined;
  const name = path.basename(document.uri.path) || 'Untitled';
  const text = document.getText().slice(offset);
  const start = document.positionAt(offset);
  const end = document.positionAt(document.getText().length);
  const words = text
    .replace(/[#*_`>[\]]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const from = words.length > 40 ? `${words.slice(0, 39)}…` : words;
  const article: Article = {
    title: `${titleOf(document.getText(), name, document.languageId === 'markdown')} (from "${from}")`,
    text,
    source: {
      kind: 'selection',
      documentUri: document.uri.toString(),
      range: { startLine: start.line, startCharacter: start.character, endLine: end.line, endCharacter: end.character },
    },
  };
  const what = `The text from the cursor to the end of "${name}"`;
  if (countCharacters(text) > TEXT_MAX_LENGTH) {
    const first = await convertInParts(ctx, article, what);
    if (first) ctx.player.playWhenReady(first.id);
    return first;
  }
  if (!checkLength(ctx, text, what)) return undefined;
  const modelId = await pickModel(ctx.extension);
  if (!modelId) return undefined;
  const job = await submit(ctx, modelId, article);
  if (job) ctx.player.playWhenReady(job.id);
  return job;
};

/**
 * From the Explorer, VS Code passes the clicked file and every selected one: each becomes its own job (one voice
 * choice for all). Returns the first job (the one clicked), for callers that convert one document.
 */
export const convertDocument =
  (ctx: CommandContext) =>
  async (uri?: vscode.Uri, selected?: vscode.Uri[]): Promise<JobRecord | undefined> => {
    const uris =
      Array.isArray(selected) && selected.length > 1
        ? selected.filter((u) => u instanceof vscode.Uri)
        : uri instanceof vscode.Uri
          ? [uri]
          : [];
    const articles: Article[] = [];
    const refused: string[] = [];
    // A PDF open in VS Code is no text editor: its tab (a binary or PDF viewer) names the file.
    const openPdf = uris.length === 0 && !vscode.window.activeTextEditor ? activePdfTab() : undefined;
    if (openPdf) uris.push(openPdf);
    if (uris.length === 0) {
      const document = vscode.window.activeTextEditor?.document;
      if (!document) {
        ctx.notifier.warn('Open the document to convert in an editor first (Markdown or plain text).');
        return undefined;
      }
      const tooLong = longDocument(document);
      if (tooLong) return convertInParts(ctx, tooLong, `"${tooLong.title}"`);
      const article = documentArticle(ctx, document, true);
      if (!article) return undefined;
      articles.push(article);
    }
    for (const file of uris) {
      const name = path.basename(file.path);
      let document: vscode.TextDocument;
      try {
        // An image, an archive or a program read aloud is minutes of letter names: refused before any work. (A file
        // too large to read here is left to openTextDocument, which refuses binary files of that size.)
        const { size } = await vscode.workspace.fs.stat(file);
        const bytes = size <= BINARY_CHECK_MAX_BYTES ? await vscode.workspace.fs.readFile(file) : undefined;
        if (bytes && isPdf(bytes)) {
          // The service takes a URL or text, and a local file has no URL: its text is read here (pdf-article.ts).
          const pdf = await pdfArticle(bytes, file, name);
          if ('problem' in pdf) {
            if (uris.length === 1) ctx.notifier.warn(pdf.problem);
            else refused.push(`${name} (${pdf.problem})`);
            continue;
          }
          if (uris.length === 1 && countCharacters(pdf.text ?? '') > TEXT_MAX_LENGTH)
            return convertInParts(ctx, pdf, `"${name}"`);
          const problem = lengthProblem(pdf.text ?? '', `"${name}"`);
          if (problem) {
            if (uris.length === 1) ctx.notifier.warn(problem);
            else refused.push(`${name} (${problem})`);
            continue;
          }
          articles.push(pdf);
          continue;
        }
        const binary = bytes ? binaryProblem(bytes.subarray(0, 64 * 1024)) : undefined;
        if (binary) {
          if (uris.length === 1) ctx.notifier.warn(`${name} ${binary}. Convert a Markdown or text file instead.`);
          else refused.push(`${name} (${binary})`);
          continue;
        }
        document = await vscode.workspace.openTextDocument(file);
      } catch (error) {
        if (uris.length === 1) ctx.notifier.error(`Could not open ${name}`, error);
        else refused.push(`${name} (${error instanceof Error ? error.message : String(error)})`);
        continue;
      }
      const tooLong = uris.length === 1 ? longDocument(document) : undefined;
      if (tooLong) return convertInParts(ctx, tooLong, `"${name}"`);
      const article = documentArticle(ctx, document, uris.length === 1);
      if (article) articles.push(article);
      else if (uris.length > 1)
        refused.push(`${name} (${lengthProblem(document.getText(), `"${name}"`) ?? 'not text'})`);
    }
    if (refused.length > 0) ctx.notifier.warn(`Not converted: ${refused.join('; ')}.`);
    if (articles.length === 0) return undefined;
    const modelId = await pickModel(ctx.extension);
    if (!modelId) return undefined;
    let first: JobRecord | undefined;
    for (const article of articles) {
      const job = await submit(ctx, modelId, article);
      first ??= job;
    }
    return first;
  };

export const convertUrl =
  (ctx: CommandContext) =>
  async (given?: string): Promise<JobRecord | undefined> => {
    const typed = typeof given === 'string' ? withScheme(given) : undefined;
    const url =
      typed && isHttpUrl(typed) ? typed : await askForUrl(typeof given === 'string' ? given : await suggestedUrl());
    if (!url) return undefined;
    const modelId = await pickModel(ctx.extension);
    if (!modelId) return undefined;
    return submit(ctx, modelId, { title: titleOfUrl(url), url, source: { kind: 'url', url } });
  };

/** The PDF file of the active tab, when a PDF is what is open. */
function activePdfTab(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input as { uri?: unknown } | undefined;
  const uri = input?.uri;
  return uri instanceof vscode.Uri && /\.pdf$/i.test(uri.path) ? uri : undefined;
}

/**
 * A PDF's text as an article (Markdown with its headings), read by the engine's PDF reader in a parse worker thread
 * (parse-runner.ts) with the engine's own time and memory limits: a hostile or huge PDF stops there instead of
 * holding the extension host. pdf.js is loaded only then, so the extension's start-up does not pay for it. Shows a
 * cancellable notification while it reads.
 */
async function pdfArticle(bytes: Uint8Array, file: vscode.Uri, name: string): Promise<Article | { problem: string }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
  const { readPdfText } = require('../speech/parse/pdf-text') as typeof import('../speech/parse/pdf-text');
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Reading the text of ${name}…`, cancellable: true },
    async (_progress, token) => {
      const stop = new AbortController();
      const cancelled = token.onCancellationRequested(() => stop.abort());
      try {
        const read = await readPdfText(bytes, `The PDF ${name}`, stop.signal);
        if (stop.signal.aborted) return { problem: `Reading ${name} was cancelled.` };
        if ('problem' in read) return read;
        return {
          title: read.title ?? name,
          text: read.text,
          source: { kind: 'document', documentUri: file.toString() },
        };
      } catch (error) {
        if (stop.signal.aborted) return { problem: `Reading ${name} was cancelled.` };
        throw error;
      } finally {
        cancelled.dispose();
      }
    },
  );
}

/** The document as one article when it is over the length limit (to offer it in parts), else undefined. */
function longDocument(document: vscode.TextDocument): Article | undefined {
  const text = document.getText();
  if (countCharacters(text) <= TEXT_MAX_LENGTH) return undefined;
  const name = path.basename(document.uri.path) || 'Untitled';
  return {
    title: titleOf(text, name, document.languageId === 'markdown'),
    text,
    source: { kind: 'document', documentUri: document.uri.toString() },
  };
}

/**
 * A text over the service's limit: offers to convert it in parts cut at headings and paragraphs, one job each, and
 * queues them to play next, one after the other. Returns the first part's job.
 */
async function convertInParts(ctx: CommandContext, article: Article, what: string): Promise<JobRecord | undefined> {
  const text = article.text ?? '';
  const parts = splitText(text, TEXT_MAX_LENGTH);
  const choice = `Convert in ${parts.length} Parts`;
  const picked = await ctx.notifier.confirm(
    `${what} has ${countCharacters(text).toLocaleString('en-US')} characters; the service takes at most ${TEXT_MAX_LENGTH.toLocaleString('en-US')} in one job.`,
    `It can be converted in ${parts.length} parts, cut at headings and paragraphs: one job each, queued to play one after the other. Or select a part of it and convert that.`,
    choice,
  );
  if (picked !== choice) return undefined;
  const modelId = await pickModel(ctx.extension);
  if (!modelId) return undefined;
  const jobs: JobRecord[] = [];
  for (const part of parts) {
    const job = await submit(ctx, modelId, {
      ...article,
      text: part.text,
      title: `${article.title} (part ${part.index} of ${parts.length})`,
    });
    if (!job) break;
    jobs.push(job);
  }
  // Next in the listening queue, ahead of what was queued before: the listener asked for this article now.
  ctx.queue.playNext(...jobs.map((job) => job.id));
  if (jobs.length === parts.length) {
    ctx.notifier.info(
      `Converting "${article.title}" in ${parts.length} parts. They are next in your listening queue and play one after the other.`,
    );
  }
  return jobs[0];
}

function documentArticle(ctx: CommandContext, document: vscode.TextDocument, warn: boolean): Article | undefined {
  const text = document.getText();
  const name = path.basename(document.uri.path) || 'Untitled';
  const problem = lengthProblem(text, `"${name}"`);
  if (problem) {
    if (warn) ctx.notifier.warn(problem);
    return undefined;
  }
  return {
    title: titleOf(text, name, document.languageId === 'markdown'),
    text,
    source: { kind: 'document', documentUri: document.uri.toString() },
  };
}

/** Submits one article; on failure says why with the fixes that fit, and Use Local Engine re-sends it there. */
export async function submit(ctx: CommandContext, modelId: ModelId, article: Article): Promise<JobRecord | undefined> {
  const settings = readSettings();
  const request: NewJob = {
    ...article,
    modelId,
    ...(settings.introAudioUrl ? { introAudioUrl: settings.introAudioUrl } : {}),
    ...(settings.outroAudioUrl ? { outroAudioUrl: settings.outroAudioUrl } : {}),
  };
  const remote = ctx.connection.current() !== 'local';
  if (!remote && !(await providerAgreed(ctx, modelId))) return undefined;
  const starting = remote ? `Sending to ${ctx.connection.describe()}…` : 'Starting the local engine…';
  try {
    return await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Article Audio: ${starting}` },
      () => ctx.jobs.submit(request),
    );
  } catch (error) {
    const resend = { title: 'Retry', run: () => submit(ctx, modelId, article) };
    const onLocal = {
      title: Fixes.useLocal.title,
      run: async () => {
        await Fixes.useLocal.run();
        return submit(ctx, modelId, article);
      },
    };
    ctx.notifier.error(`Could not convert "${article.title}"`, error, remote ? [onLocal, resend] : [resend]);
    return undefined;
  }
}

/** The origins whose speech provider the user agreed to send article text to (globalState). */
const PROVIDER_AGREED_KEY = 'articleAudio.voice.agreed';

/**
 * The first time a job's text would go to a speech provider (the local engine reading this model with a provider
 * voice), says where it goes and asks; the answer is kept per provider address. The built-in voices send nothing.
 */
async function providerAgreed(ctx: CommandContext, modelId: ModelId): Promise<boolean> {
  const voice = readVoiceSettings();
  if (!providerReads(voice, modelId)) return true;
  let origin: string;
  try {
    origin = new URL(voice.baseUrl).origin;
  } catch {
    ctx.notifier.warn(
      `The setting articleAudio.voice.baseUrl is not an address (${voice.baseUrl}). Set it to the speech API's base URL, for example https://api.openai.com/v1.`,
    );
    return false;
  }
  const agreed = ctx.extension.globalState.get<string[]>(PROVIDER_AGREED_KEY, []);
  if (agreed.includes(origin)) return true;
  const host = providerHost(voice);
  const send = `Send to ${host}`;
  const answer = await ctx.notifier.confirm(
    `${modelLabel(modelId)} reads with the voice "${modelId === 'article-podcast-1-pro' ? voice.podcastVoices.join('" and "') : voice.voice}" of ${host}: the article's text is sent there to be spoken.`,
    'The built-in voices send nothing anywhere; to keep using them, set articleAudio.voice.provider to "builtin".',
    send,
    'Open Voice Settings',
  );
  if (answer === 'Open Voice Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'articleAudio.voice');
    return false;
  }
  if (answer !== send) return false;
  await ctx.extension.globalState.update(PROVIDER_AGREED_KEY, [...agreed, origin]);
  return true;
}

export async function pickModel(extension: vscode.ExtensionContext): Promise<ModelId | undefined> {
  const fixed = readSettings().model;
  if (fixed !== 'ask') return fixed;
  const last = extension.globalState.get<string>(LAST_MODEL_KEY);
  const order = [...MODEL_IDS].sort((a, b) => (a === last ? -1 : b === last ? 1 : 0));
  const picked = await vscode.window.showQuickPick(
    order.map((id) => ({ label: modelLabel(id), description: id, detail: modelById(id).description, id })),
    {
      title: 'Article Audio: Voice',
      placeHolder: 'Choose how the article should sound (set articleAudio.model to skip this)',
      matchOnDescription: true,
      matchOnDetail: true,
    },
  );
  if (!picked) return undefined;
  await extension.globalState.update(LAST_MODEL_KEY, picked.id);
  return picked.id;
}

function checkLength(ctx: CommandContext, text: string, what: string): boolean {
  const problem = lengthProblem(text, what);
  if (problem) ctx.notifier.warn(problem);
  return problem === undefined;
}

function lengthProblem(text: string, what: string): string | undefined {
  const length = countCharacters(text);
  if (length < TEXT_MIN_LENGTH)
    return `${what} has ${length} characters; an article needs at least ${TEXT_MIN_LENGTH}. Select more text.`;
  if (length > TEXT_MAX_LENGTH) {
    return `${what} has ${length.toLocaleString('en-US')} characters; the service takes at most ${TEXT_MAX_LENGTH.toLocaleString('en-US')}. Select a part of it and convert that.`;
  }
  const problem = textProblem(text);
  return problem ? `${what} ${problem}. Select text with words in it.` : undefined;
}

/** The first Markdown heading, else the first line, else the fallback. */
export function titleOf(text: string, fallback: string, preferHeading = true): string {
  const heading = preferHeading ? /^\s{0,3}#{1,3}\s+(.+?)\s*#*\s*$/m.exec(text.slice(0, 5000))?.[1] : undefined;
  const firstLine = text
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line.length > 0);
  const raw = heading ?? (firstLine && firstLine.length <= 80 ? firstLine : undefined) ?? fallback;
  const clean = raw
    .replace(/[*_`[\]]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return clean.length > 80 ? `${clean.slice(0, 79)}…` : clean || fallback;
}

function titleOfUrl(url: string): string {
  const parsed = new URL(url);
  const last = parsed.pathname.split('/').filter(Boolean).at(-1);
  let name = last ?? '';
  try {
    name = decodeURIComponent(name);
  } catch {
    // A malformed escape: the name as it is.
  }
  return last
    ? `${parsed.hostname.replace(/^www\./, '')}: ${name.replace(/[-_]+/g, ' ').replace(/\.\w+$/, '')}`
    : parsed.hostname;
}

/** `example.com/page` as people type it: https:// is added when no scheme is given. */
export function withScheme(input: string): string {
  const trimmed = input.trim();
  if (!trimmed || /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return trimmed;
  if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !/^[^:/]+:\d+(\/|$)/.test(trimmed)) return trimmed;
  return `https://${trimmed.replace(/^\/+/, '')}`;
}

async function askForUrl(value: string | undefined): Promise<string | undefined> {
  const answer = await vscode.window.showInputBox({
    title: 'Article Audio: Convert URL',
    prompt: 'Address of the article (a web page, or a Markdown or text file); https:// is added if you leave it out',
    value: value ?? '',
    placeHolder: 'https://example.com/blog/post',
    ignoreFocusOut: true,
    validateInput: (input) => {
      const url = withScheme(input);
      if (!url) return 'Enter the address of the article.';
      if (!/^https?:\/\//i.test(url)) return 'The address must be a web address (http:// or https://).';
      return isHttpUrl(url) && new URL(url).hostname.includes('.') !== false
        ? undefined
        : 'This is not a valid web address.';
    },
  });
  const url = answer === undefined ? undefined : withScheme(answer);
  return url && isHttpUrl(url) ? url : undefined;
}

/** A link under the cursor (Markdown link or bare address), else an address on the clipboard. */
async function suggestedUrl(): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (editor) {
    const position = editor.selection.active;
    const line = editor.document.lineAt(position.line).text;
    for (const match of line.matchAll(/https?:\/\/[^\s<>"')\]]+/g)) {
      const start = match.index;
      const end = start + match[0].length;
      if (position.character >= start - 1 && position.character <= end + 1 && isHttpUrl(match[0])) return match[0];
    }
    const selected = editor.document.getText(editor.selection).trim();
    if (isHttpUrl(selected)) return selected;
  }
  // In a browser, reading the clipboard waits on a permission prompt (and shows an error when refused): no
  // suggestion is worth that before the box even opens.
  if (vscode.env.uiKind === vscode.UIKind.Web) return undefined;
  const clipboard = (await vscode.env.clipboard.readText()).trim();
  return isHttpUrl(clipboard) && !/\s/.test(clipboard) ? clipboard : undefined;
}
