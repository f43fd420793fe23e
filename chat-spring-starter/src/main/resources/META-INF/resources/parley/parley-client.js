// Parley's browser client: a plain ES module, no build step. Seed 004's front-end orchestration for any
// page: sessions, send, a live stream that reconnects from the last seen event, the reducer, clarify
// answers, stop, regenerate and feedback.
//
//   import { ParleyClient } from '/parley/parley-client.js';
//   const client = new ParleyClient({ baseUrl: '/api/chat' });
//   const session = await client.createSession();
//   const run = await client.startRun(session.id, { message: 'Hello' });
//   client.watch(run.runId, { onChange: (reducer) => render(reducer.messages()) });

import { RunReducer, isTerminal } from './reducer.js';

export { RunReducer, isTerminal };

/** An error answered by the server (RFC 9457 problem details), or a network failure (status 0). */
export class ParleyError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
    this.name = 'ParleyError';
    this.status = status;
    this.code = problem?.code ?? (status === 0 ? 'NETWORK' : 'HTTP_' + status);
    this.problem = problem ?? null;
  }
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The value of cookie `name` in this page, or null (also outside a browser). */
function readCookie(name) {
  const cookies = globalThis.document?.cookie;
  if (!cookies) return null;
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
});

/** Talks to Parley's REST + SSE endpoints. */
export class ParleyClient {
  /**
   * @param {object} [options]
   * @param {string} [options.baseUrl='/api/chat'] where the endpoints live
   * @param {object|((request: {method: string, url: string}) => object|Promise<object>)} [options.headers]
   *   extra headers for every request (e.g. an owner header behind a proxy), or a function returning them
   *   for each request
   * @param {{headerName?: string, cookieName?: string, token?: string|(() => string|Promise<string>)}} [options.csrf]
   *   the host's CSRF token, sent in `headerName` (default `X-XSRF-TOKEN`) on every POST, PATCH and DELETE:
   *   `token` (a string, or a function called per request), else read per request from the cookie
   *   `cookieName` (default `XSRF-TOKEN`) — Spring Security's CookieCsrfTokenRepository pairing
   * @param {Function} [options.fetch] the fetch to use (default: the global one)
   * @param {number[]} [options.reconnectDelays] the waits before successive reconnect attempts, in ms
   */
  constructor(options = {}) {
    this.baseUrl = (options.baseUrl ?? '/api/chat').replace(/\/$/, '');
    this.headers = options.headers ?? {};
    this.csrf = options.csrf ?? null;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.reconnectDelays = options.reconnectDelays ?? [250, 500, 1000, 2000, 5000];
  }

  /** The headers for one request: the extra headers, and the CSRF token on requests that change something. */
  async headersFor(method, url) {
    const extra = typeof this.headers === 'function' ? await this.headers({ method, url }) : this.headers;
    const headers = { ...(extra ?? {}) };
    if (this.csrf && UNSAFE_METHODS.has(method)) {
      const { token, cookieName = 'XSRF-TOKEN', headerName = 'X-XSRF-TOKEN' } = this.csrf;
      const value = typeof token === 'function' ? await token() : (token ?? readCookie(cookieName));
      if (value) headers[headerName] = value;
    }
    return headers;
  }

  async request(method, path, body) {
    const url = this.baseUrl + path;
    const init = { method, headers: { Accept: 'application/json', ...(await this.headersFor(method, url)) } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await this.fetch(url, init);
    } catch (e) {
      throw new ParleyError(0, { title: 'Network error', detail: String(e?.message ?? e) });
    }
    if (response.status === 204) return null;
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    if (!response.ok) throw new ParleyError(response.status, data);
    return data;
  }

  // ---- sessions (threads)
  listSessions({ offset = 0, limit = 50 } = {}) {
    return this.request('GET', `/sessions?offset=${offset}&limit=${limit}`);
  }
  createSession({ title, modelId, skill } = {}) {
    return this.request('POST', '/sessions', { title, modelId, skill });
  }
  getSession(id, { limit } = {}) {
    return this.request('GET', `/sessions/${encodeURIComponent(id)}` + (limit ? `?limit=${limit}` : ''));
  }
  messages(id, { before, limit } = {}) {
    const query = new URLSearchParams();
    if (before) query.set('before', before);
    if (limit) query.set('limit', String(limit));
    return this.request('GET', `/sessions/${encodeURIComponent(id)}/messages?${query}`);
  }
  /** Changes title, modelId, skill (null clears them) or archived. */
  updateSession(id, patch) {
    return this.request('PATCH', `/sessions/${encodeURIComponent(id)}`, patch);
  }
  deleteSession(id) {
    return this.request('DELETE', `/sessions/${encodeURIComponent(id)}`);
  }

  // ---- runs
  startRun(sessionId, { message, modelId, skill, maxIterations, context } = {}) {
    return this.request('POST', `/sessions/${encodeURIComponent(sessionId)}/runs`,
      { message, modelId, skill, maxIterations, context });
  }
  state(runId) {
    return this.request('GET', `/runs/${encodeURIComponent(runId)}/state`);
  }
  /** Answers a clarify question: a string, or an array of strings for a multi-select question. */
  answer(runId, clarifyId, answer) {
    return this.request('POST', `/runs/${encodeURIComponent(runId)}/resume`, { clarifyId, answer });
  }
  cancel(runId) {
    return this.request('POST', `/runs/${encodeURIComponent(runId)}/cancel`);
  }
  regenerate(messageId) {
    return this.request('POST', `/messages/${encodeURIComponent(messageId)}/regenerate`);
  }
  /** rating: 'up' or 'down'. */
  feedback(messageId, rating, comment) {
    return this.request('POST', `/messages/${encodeURIComponent(messageId)}/feedback`, { rating, comment });
  }
  models() {
    return this.request('GET', '/models');
  }
  skills() {
    return this.request('GET', '/skills');
  }

  /**
   * Streams a run's events after `after` (a seq), reconnecting with the last seen seq whenever the
   * connection drops, until the terminal event. Returns a handle: `close()` stops listening (it never
   * stops the run), `done` resolves to 'ended' (terminal event seen), 'closed' or rejects with a
   * ParleyError the server answered (e.g. 404), `lastSeq` is the cursor.
   *
   * @param {string} runId
   * @param {object} handlers
   * @param {number} [handlers.after=0]
   * @param {(event: object) => void} handlers.onEvent called with each run event, in seq order, once
   * @param {(status: 'connecting'|'open'|'reconnecting'|'ended'|'closed', detail?: object) => void} [handlers.onStatus]
   */
  stream(runId, { after = 0, onEvent, onStatus = () => {} } = {}) {
    const abort = new AbortController();
    const handle = { lastSeq: after, close: () => abort.abort() };
    handle.done = (async () => {
      let attempt = 0;
      while (!abort.signal.aborted) {
        onStatus(attempt === 0 ? 'connecting' : 'reconnecting', { attempt, lastSeq: handle.lastSeq });
        let ended = false;
        try {
          const url = `${this.baseUrl}/runs/${encodeURIComponent(runId)}/stream?lastEventId=${handle.lastSeq}`;
          const response = await this.fetch(url, {
            headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(handle.lastSeq), ...(await this.headersFor('GET', url)) },
            signal: abort.signal,
          });
          if (!response.ok) {
            const text = await response.text();
            const problem = text ? JSON.parse(text) : null;
            if (response.status < 500) throw new ParleyError(response.status, problem);
            throw new Error(`HTTP ${response.status}`);
          }
          onStatus('open', { lastSeq: handle.lastSeq });
          ended = await readEvents(response.body, (event) => {
            if (event.seq <= handle.lastSeq) return false;
            handle.lastSeq = event.seq;
            attempt = 0;
            onEvent(event);
            return isTerminal(event.event);
          });
        } catch (e) {
          if (e instanceof ParleyError) {
            onStatus('closed', { error: e });
            throw e;
          }
          if (abort.signal.aborted) break;
        }
        if (ended) {
          onStatus('ended', { lastSeq: handle.lastSeq });
          return 'ended';
        }
        const delay = this.reconnectDelays[Math.min(attempt, this.reconnectDelays.length - 1)];
        attempt++;
        onStatus('reconnecting', { attempt, lastSeq: handle.lastSeq, delay });
        await sleep(delay, abort.signal);
      }
      onStatus('closed', { lastSeq: handle.lastSeq });
      return 'closed';
    })();
    return handle;
  }

  /**
   * Follows a run through a reducer: `onChange(reducer, event)` after every event. Pass the reducer of
   * a run already partly shown (and its lastSeq as `after`) to continue it.
   */
  watch(runId, { after, reducer = new RunReducer(), onChange = () => {}, onStatus } = {}) {
    const handle = this.stream(runId, {
      after: after ?? reducer.lastSeq,
      onStatus,
      onEvent: (event) => {
        reducer.apply(event);
        onChange(reducer, event);
      },
    });
    handle.reducer = reducer;
    return handle;
  }
}

/**
 * Reads an SSE body, calling `deliver` with each parsed run event; `deliver` returns true at the
 * terminal event. Resolves true when the terminal event was read, false when the body just ended.
 */
async function readEvents(body, deliver) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        let line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length > 0) {
            const event = JSON.parse(data.join('\n'));
            data = [];
            if (deliver(event)) return true;
          }
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
