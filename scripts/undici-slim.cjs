'use strict';
// The part of undici the extension uses (request/stream API, Agent, EnvHttpProxyAgent, the redirect and retry
// interceptors, errors), without fetch, WebSocket, caches and mocks (undici's own entry is about 1 MB minified).
// esbuild.mjs maps `undici` here for the extension bundle only; the engine and the command line bundle the full package. `makeDispatcher` is undici's own
// (index.js of the pinned version), so `request(url, opts)` behaves exactly as the package's.
const Dispatcher = require('undici/lib/dispatcher/dispatcher.js');
const Agent = require('undici/lib/dispatcher/agent.js');
const ProxyAgent = require('undici/lib/dispatcher/proxy-agent.js');
const EnvHttpProxyAgent = require('undici/lib/dispatcher/env-http-proxy-agent.js');
const redirect = require('undici/lib/interceptor/redirect.js');
const retry = require('undici/lib/interceptor/retry.js');
const errors = require('undici/lib/core/errors.js');
const util = require('undici/lib/core/util.js');
const api = require('undici/lib/api/index.js');
const { getGlobalDispatcher, setGlobalDispatcher } = require('undici/lib/global.js');

const { InvalidArgumentError } = errors;
Object.assign(Dispatcher.prototype, api);

function makeDispatcher(fn) {
  return (url, opts, handler) => {
    if (typeof opts === 'function') {
      handler = opts;
      opts = null;
    }
    if (!url || (typeof url !== 'string' && typeof url !== 'object' && !(url instanceof URL))) {
      throw new InvalidArgumentError('invalid url');
    }
    if (opts != null && typeof opts !== 'object') {
      throw new InvalidArgumentError('invalid opts');
    }
    if (opts && opts.path != null) {
      if (typeof opts.path !== 'string') throw new InvalidArgumentError('invalid opts.path');
      const path = opts.path.startsWith('/') ? opts.path : `/${opts.path}`;
      url = new URL(util.parseOrigin(url).origin + path);
    } else {
      if (!opts) opts = typeof url === 'object' ? url : {};
      url = util.parseURL(url);
    }
    const { agent, dispatcher = getGlobalDispatcher() } = opts;
    if (agent) throw new InvalidArgumentError('unsupported opts.agent. Did you mean opts.client?');
    return fn.call(
      dispatcher,
      {
        ...opts,
        origin: url.origin,
        path: url.search ? `${url.pathname}${url.search}` : url.pathname,
        method: opts.method || (opts.body ? 'PUT' : 'GET'),
      },
      handler,
    );
  };
}

module.exports = {
  Dispatcher,
  Agent,
  ProxyAgent,
  EnvHttpProxyAgent,
  interceptors: { redirect, retry },
  errors,
  getGlobalDispatcher,
  setGlobalDispatcher,
  request: makeDispatcher(api.request),
  stream: makeDispatcher(api.stream),
  pipeline: makeDispatcher(api.pipeline),
};
