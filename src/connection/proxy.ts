// Requests to a remote service go through the proxy VS Code is set up with (`http.proxy`, else the HTTPS_PROXY /
// HTTP_PROXY environment), honouring `http.noProxy` / NO_PROXY, `http.proxyStrictSSL` and
// `http.proxyAuthorization`, with undici's ProxyAgent. The local engine on loopback is always reached directly.
import { Agent, type Dispatcher, ProxyAgent } from 'undici';
import * as vscode from 'vscode';

export interface ProxySettings {
  proxy: string | undefined;
  strictSSL: boolean;
  noProxy: string[];
  authorization: string | undefined;
}

export function readProxySettings(env: NodeJS.ProcessEnv = process.env): ProxySettings {
  const http = vscode.workspace.getConfiguration('http');
  const configured = http.get<string>('proxy')?.trim();
  const fromEnv = env.HTTPS_PROXY ?? env.https_proxy ?? env.HTTP_PROXY ?? env.http_proxy;
  const noProxy = [...(http.get<string[]>('noProxy') ?? []), ...(env.NO_PROXY ?? env.no_proxy ?? '').split(',')]
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  return {
    proxy: configured || fromEnv?.trim() || undefined,
    strictSSL: http.get<boolean>('proxyStrictSSL', true),
    noProxy,
    authorization: http.get<string | null>('proxyAuthorization')?.trim() || undefined,
  };
}

/** Whether `host` matches a no-proxy entry (`example.com`, `.example.com`, `*.example.com`, `*`, `host:port`). */
export function bypassesProxy(target: URL, noProxy: readonly string[]): boolean {
  const host = target.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  return noProxy.some((raw) => {
    if (raw === '*') return true;
    const [name = '', entryPort] = raw.replace(/^\*?\./, '.').split(/:(?=\d+$)/);
    if (entryPort && entryPort !== port) return false;
    if (name.startsWith('.')) return host.endsWith(name) || host === name.slice(1);
    return host === name || host.endsWith(`.${name}`);
  });
}

/** The dispatcher for requests to `baseUrl`, or undefined for undici's default (direct, certificates checked). */
export function dispatcherFor(baseUrl: string, settings: ProxySettings): Dispatcher | undefined {
  const target = new URL(baseUrl);
  const loopback = ['localhost', '127.0.0.1', '[::1]', '::1'].includes(target.hostname);
  if (settings.proxy && !loopback && !bypassesProxy(target, settings.noProxy)) {
    const proxyUrl = settings.proxy.includes('://') ? settings.proxy : `http://${settings.proxy}`;
    return new ProxyAgent({
      uri: proxyUrl,
      ...(settings.authorization ? { token: settings.authorization } : {}),
      requestTls: { rejectUnauthorized: settings.strictSSL },
      proxyTls: { rejectUnauthorized: settings.strictSSL },
    });
  }
  if (!settings.strictSSL) return new Agent({ connect: { rejectUnauthorized: false } });
  return undefined;
}
