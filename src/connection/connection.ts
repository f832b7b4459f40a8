// Which job service the extension talks to, and a client for it: the local engine when no base URL is set, else the
// remote service with the key from SecretStorage, through VS Code's proxy settings. One code path either way: the
// extension always speaks the API over HTTP (DESIGN.md).
import * as vscode from 'vscode';
import { randomUUID } from 'node:crypto';
import { AuthenticationError, JobServiceClient, NotFoundError } from '../api/index';
import { ContextKeys } from '../command-ids';
import { affectsService, readSettings } from '../config';
import { Disposable } from '../disposable';
import type { ApiKeyStore } from './api-key';
import type { LocalEngine } from './local-engine';
import type { Logger } from './log';
import { dispatcherFor, readProxySettings } from './proxy';

import { OtherServiceError, type JobServices, type ServiceId } from '../jobs/services';

export { OtherServiceError, type ServiceId } from '../jobs/services';

export const USER_AGENT = 'article-audio-vscode/0.1';

/** The remote service needs a key and none is stored. */
export class MissingApiKeyError extends AuthenticationError {
  static {
    this.prototype.name = 'MissingApiKeyError';
  }
}

export class ServiceConnection extends Disposable implements JobServices {
  private readonly changed = this.register(new vscode.EventEmitter<ServiceId>());
  /** Fires when the settings switch to another service, or its key or proxy changed. */
  readonly onDidChange = this.changed.event;
  private cached: { key: string; client: JobServiceClient } | undefined;

  constructor(
    private readonly engine: LocalEngine,
    private readonly keys: ApiKeyStore,
    private readonly log: Logger,
    private readonly engineToken: () => Promise<string>,
  ) {
    super();
    this.register(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (!affectsService(event)) return;
        this.cached = undefined;
        void this.updateContext();
        void this.keys.refreshContext();
        this.changed.fire(this.current());
      }),
    );
    this.register(
      keys.onDidChange(() => {
        this.cached = undefined;
        this.changed.fire(this.current());
      }),
    );
    void this.updateContext();
  }

  current(): ServiceId {
    return readSettings().baseUrl ?? 'local';
  }

  describe(service: ServiceId = this.current()): string {
    return service === 'local' ? 'the local engine' : new URL(service).host;
  }

  /** A client for `service` (default: the current one). Starts the local engine when needed. */
  async client(service: ServiceId = this.current()): Promise<JobServiceClient> {
    if (service !== this.current()) {
      throw new OtherServiceError(
        `This job belongs to ${this.describe(service)}, but Article Audio now uses ${this.describe()}. Switch back to reach it.`,
      );
    }
    if (service === 'local') {
      await this.engine.ensure();
      const token = await this.engineToken();
      return this.reuse(
        'local',
        () =>
          new JobServiceClient({
            // Read before every request: an engine restarted on another port is found by the same client.
            baseUrl: () => this.engine.ensure(),
            apiKey: token,
            userAgent: USER_AGENT,
            log: this.clientLog(),
            maxRetries: 2,
          }),
      );
    }
    const key = await this.keys.get(service);
    if (!key) {
      throw new MissingApiKeyError(
        `Article Audio needs an API key for ${this.describe(service)}. Set it with "Article Audio: Set API Key…", or switch to the local engine.`,
        { code: 'missing_api_key' },
      );
    }
    const proxy = readProxySettings();
    return this.reuse(`remote ${service} ${JSON.stringify(proxy)}`, () => {
      if (proxy.proxy) this.log.info(`reaching ${this.describe(service)} through the proxy ${safeProxy(proxy.proxy)}`);
      return new JobServiceClient({
        baseUrl: service,
        // Read for every request, so that a key changed in another window takes effect at once.
        apiKey: () => this.keys.get(service),
        userAgent: USER_AGENT,
        log: this.clientLog(),
        dispatcher: dispatcherFor(proxy),
      });
    });
  }

  /**
   * Asks the remote service whether it takes `key`, with one cheap request: the status of a job id nobody has.
   * 404 means the key got past authentication (accepted), 401/403 that the service refused it. Anything else (the
   * service unreachable, a 5xx) is thrown: the key could not be checked.
   */
  async checkKey(service: string, key: string): Promise<'accepted' | 'refused'> {
    const proxy = readProxySettings();
    const dispatcher = dispatcherFor(proxy);
    const client = new JobServiceClient({
      baseUrl: service,
      apiKey: key,
      userAgent: USER_AGENT,
      log: this.clientLog(),
      maxRetries: 1,
      dispatcher,
    });
    try {
      await client.getJob(`key-check-${randomUUID()}`, { deadline: Date.now() + 20_000 });
      return 'accepted';
    } catch (error) {
      if (error instanceof NotFoundError) return 'accepted';
      if (error instanceof AuthenticationError) return 'refused';
      throw error;
    }
  }

  /** The engine in use, in words for the status bar and the Jobs view: "local engine" or the remote address. */
  engineDescription(): string {
    const service = this.current();
    return service === 'local' ? 'local engine' : `remote service ${this.describe(service)}`;
  }

  private reuse(key: string, create: () => JobServiceClient): JobServiceClient {
    if (this.cached?.key !== key) this.cached = { key, client: create() };
    return this.cached.client;
  }

  private clientLog() {
    return (level: 'debug' | 'info' | 'warn' | 'error', message: string) => this.log.log(level, message);
  }

  private async updateContext(): Promise<void> {
    await vscode.commands.executeCommand(
      'setContext',
      ContextKeys.serviceMode,
      this.current() === 'local' ? 'local' : 'remote',
    );
  }
}

function safeProxy(proxy: string): string {
  try {
    const url = new URL(proxy.includes('://') ? proxy : `http://${proxy}`);
    return url.host;
  } catch {
    return 'configured in http.proxy';
  }
}
