// VS Code's proxy settings (`http.proxy`, else the HTTPS_PROXY / HTTP_PROXY environment; `http.noProxy` with NO_PROXY;
// `http.proxyStrictSSL`; `http.proxyAuthorization`), for the dispatcher in proxy-agent.ts.
import * as vscode from 'vscode';
import type { ProxySettings } from './proxy-agent';

export { dispatcherFor, type ProxySettings } from './proxy-agent';

export function readProxySettings(env: NodeJS.ProcessEnv = process.env): ProxySettings {
  const http = vscode.workspace.getConfiguration('http');
  const noProxy = [...(http.get<string[]>('noProxy') ?? []), ...(env.NO_PROXY ?? env.no_proxy ?? '').split(',')]
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  return {
    proxy: http.get<string>('proxy')?.trim() || undefined,
    strictSSL: http.get<boolean>('proxyStrictSSL', true),
    noProxy,
    authorization: http.get<string | null>('proxyAuthorization')?.trim() || undefined,
  };
}
