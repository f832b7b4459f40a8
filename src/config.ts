// The extension's settings, read in one place with their defaults (package.json `contributes.configuration` documents
// each). Re-read on every use, so a changed setting takes effect for the next job without a reload.
import * as vscode from 'vscode';
import { isModelId, type ModelId } from './protocol';

export const SECTION = 'articleAudio';

export interface Settings {
  /** The remote service's base address; undefined means the local engine. */
  baseUrl: string | undefined;
  /** A fixed model, or `ask`. */
  model: ModelId | 'ask';
  introAudioUrl: string | undefined;
  outroAudioUrl: string | undefined;
  saveDirectory: string | undefined;
  openPlayerWhenDone: boolean;
}

export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const model = config.get<string>('model', 'ask');
  return {
    baseUrl: nonEmpty(config.get<string>('service.baseUrl')),
    model: isModelId(model) ? model : 'ask',
    introAudioUrl: nonEmpty(config.get<string>('introAudioUrl')),
    outroAudioUrl: nonEmpty(config.get<string>('outroAudioUrl')),
    saveDirectory: nonEmpty(config.get<string>('saveDirectory')),
    openPlayerWhenDone: config.get<boolean>('openPlayerWhenDone', true),
  };
}

/** Sets the remote base URL where the user keeps it (workspace if it is set there, else user settings). */
export async function updateBaseUrl(value: string): Promise<void> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const inspected = config.inspect<string>('service.baseUrl');
  if (inspected?.workspaceFolderValue !== undefined)
    await config.update('service.baseUrl', value || undefined, vscode.ConfigurationTarget.WorkspaceFolder);
  if (inspected?.workspaceValue !== undefined)
    await config.update('service.baseUrl', value || undefined, vscode.ConfigurationTarget.Workspace);
  await config.update('service.baseUrl', value || undefined, vscode.ConfigurationTarget.Global);
}

export function affectsService(event: vscode.ConfigurationChangeEvent): boolean {
  return (
    event.affectsConfiguration(`${SECTION}.service`) ||
    event.affectsConfiguration('http.proxy') ||
    event.affectsConfiguration('http.proxyStrictSSL') ||
    event.affectsConfiguration('http.noProxy') ||
    event.affectsConfiguration('http.proxyAuthorization')
  );
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
