// The undici dispatcher for requests to the job service, from VS Code's proxy settings: undici's EnvHttpProxyAgent
// (the proxy for http:// and https:// addresses, NO_PROXY matching, Proxy-Authorization, TLS checks for both legs).
// Plain Node, so that a test can send real requests through it.
import { EnvHttpProxyAgent, type Dispatcher } from 'undici';

export interface ProxySettings {
  /** VS Code's `http.proxy`; when unset, HTTP_PROXY / HTTPS_PROXY from the environment, read by undici. */
  proxy: string | undefined;
  strictSSL: boolean;
  /** `http.noProxy` and NO_PROXY together. */
  noProxy: string[];
  authorization: string | undefined;
}

/** The local engine on loopback is always reached directly. */
const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** The dispatcher for requests to the service: through the proxy unless NO_PROXY (or loopback) says otherwise. */
export function dispatcherFor(settings: ProxySettings): Dispatcher {
  const proxy = settings.proxy && (settings.proxy.includes('://') ? settings.proxy : `http://${settings.proxy}`);
  const tls = { rejectUnauthorized: settings.strictSSL };
  // undici treats "*" as "never proxy" only when it is the whole list.
  const noProxy = settings.noProxy.includes('*') ? '*' : [...settings.noProxy, ...LOOPBACK].join(',');
  return new EnvHttpProxyAgent({
    ...(proxy ? { httpProxy: proxy, httpsProxy: proxy } : {}),
    noProxy,
    ...(settings.authorization ? { token: settings.authorization } : {}),
    connect: tls,
    requestTls: tls,
    proxyTls: tls,
  });
}
