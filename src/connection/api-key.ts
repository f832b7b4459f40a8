// The remote services' API keys, kept only in VS Code's SecretStorage (the OS keyring). Never in settings, never in
// the log: every key read or stored here is added to the log's redactor first. A key belongs to the origin of the
// service it was set for: a base URL changed later (by hand, or by a workspace's settings) never receives it.
import * as vscode from 'vscode';
import type { Redactor } from '../api/index';
import { ContextKeys } from '../command-ids';
import { Disposable } from '../disposable';

const KEY_PREFIX = 'articleAudio.apiKey:';

/** The SecretStorage name of the key for a service's base URL: one per origin (scheme, host, port). */
export function secretNameFor(baseUrl: string): string {
  return `${KEY_PREFIX}${new URL(baseUrl).origin}`;
}

/** SecretStorage failed, most often because no OS keyring is available (Linux without a Secret Service). */
export class KeyringUnavailableError extends Error {
  static {
    this.prototype.name = 'KeyringUnavailableError';
  }
}

export class ApiKeyStore extends Disposable {
  private readonly changed = this.register(new vscode.EventEmitter<void>());
  /** Fires when the key changes, in this window or in another. */
  readonly onDidChange = this.changed.event;

  /** `current` is the remote service's base URL in use, undefined with the local engine (for the context key). */
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly redactor: Redactor,
    private readonly current: () => string | undefined,
  ) {
    super();
    this.register(
      secrets.onDidChange((event) => {
        if (!event.key.startsWith(KEY_PREFIX)) return;
        void this.refreshContext();
        this.changed.fire();
      }),
    );
    void this.refreshContext();
  }

  /** The key for the service at `baseUrl`, if one was set for its origin. */
  async get(baseUrl: string): Promise<string | undefined> {
    let key: string | undefined;
    try {
      key = await this.secrets.get(secretNameFor(baseUrl));
    } catch (error) {
      throw keyringError('read', error);
    }
    this.redactor.add(key);
    return key?.trim() || undefined;
  }

  async set(baseUrl: string, key: string): Promise<void> {
    this.redactor.add(key);
    try {
      await this.secrets.store(secretNameFor(baseUrl), key.trim());
    } catch (error) {
      throw keyringError('store', error);
    }
    await this.refreshContext();
  }

  async clear(baseUrl: string): Promise<void> {
    try {
      await this.secrets.delete(secretNameFor(baseUrl));
    } catch (error) {
      throw keyringError('delete', error);
    }
    await this.refreshContext();
  }

  /** Sets the context key `articleAudio.hasApiKey` for the service in use (call after the base URL changes). */
  async refreshContext(): Promise<void> {
    const service = this.current();
    let present = false;
    try {
      present = service !== undefined && (await this.get(service)) !== undefined;
    } catch {
      present = false;
    }
    await vscode.commands.executeCommand('setContext', ContextKeys.hasApiKey, present);
  }
}

/** Problems with a key typed into the input box; undefined when it looks usable. */
export function checkApiKey(value: string): string | undefined {
  const key = value.trim();
  if (key.length === 0) return 'Enter the API key of your job service.';
  if (/\s/.test(key)) return 'An API key has no spaces or line breaks. Paste the key alone.';
  if (!/^[\x21-\x7e]+$/.test(key)) return 'An API key is made of visible ASCII characters only.';
  return undefined;
}

function keyringError(action: 'read' | 'store' | 'delete', error: unknown): KeyringUnavailableError {
  const reason = error instanceof Error ? error.message : String(error);
  return new KeyringUnavailableError(
    `Could not ${action} the API key in the OS keyring (${reason}). VS Code keeps secrets in the system keyring: on Linux, install and unlock a Secret Service such as GNOME Keyring or KWallet, or start VS Code with --password-store="basic". See "Troubleshooting" in the Article Audio README.`,
    { cause: error },
  );
}
