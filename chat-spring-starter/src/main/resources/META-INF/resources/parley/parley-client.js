// Parley's browser client: a plain ES module, no build step. The front-end orchestration for any
// page: sessions, send, a live stream that reconnects from the last seen event, the reducer, answers to
// pending inputs (clarify questions, approvals), tools that run in the page, stop, regenerate and feedback;
// sends that are safe to retry (a client message id each), edits and branches, search and export.
//
//   import { ParleyClient } from '/parley/parley-client.js';
//   const client = new ParleyClient({ baseUrl: '/api/chat' });
//   client.registerTool('get_local_time', { type: 'object', properties: {} }, () => ({ time: new Date().toString() }));
//   const session = await client.createSession();
//   const run = await client.startRun(session.id, { message: 'Hello' });
//   client.watch(run.runId, { onChange: (reducer) => render(reducer.messages(), reducer.pendingInputs()) });

import { RunReducer, isTerminal } from './reducer.js';

export { RunReducer, isTerminal };

/**
 * An error answered by the server (RFC 9457 problem details), a network failure (status 0), or an answer
 * that is not what Parley sends (code UNEXPECTED_RESPONSE: e.g. a login page after a redirect).
 */
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
const TERMINAL_RUN_STATUSES = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'INTERRUPTED']);

/** Statuses worth asking again after a while: a timeout, too many requests, a server or gateway error. */
const retryable = (status) => status === 0 || status === 408 || status === 429 || status >= 500;

const unexpected = (status, detail) =>
  new ParleyError(status, { title: 'Unexpected response', detail, code: 'UNEXPECTED_RESPONSE' });

/** Waits `ms`, or less if `signal` aborts; leaves no listener behind. */
const defaultSleep = (ms, signal) => new Promise((resolve) => {
  if (signal?.aborted) {
    resolve();
    return;
  }
  const done = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', done);
    resolve();
  };
  const timer = setTimeout(done, ms);
  signal?.addEventListener('abort', done);
});

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

/** The body of an answer: JSON when it says so, else null; never throws on a body that is not JSON. */
async function readJson(response) {
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  const text = await response.text().catch(() => '');
  if (!text || !/^application\/([a-z0-9.+-]+\+)?json\b/.test(type)) return { json: null, text };
  try {
    return { json: JSON.parse(text), text };
  } catch {
    return { json: null, text };
  }
}

/**
 * A new client message id: a random UUID — crypto.randomUUID where the page may use it (a secure context),
 * else built from crypto.getRandomValues, which every page has.
 */
export function newClientMessageId() {
  const crypto = globalThis.crypto;
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The file name a Content-Disposition header gives, or null. */
function dispositionFilename(header) {
  if (!header) return null;
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // a malformed extended name: fall back to the plain one
    }
  }
  const plain = /filename="?([^";]+)"?/i.exec(header);
  return plain ? plain[1].trim() : null;
}

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
   * @param {number[]} [options.reconnectDelays] the waits before successive reconnects without progress, in
   *   ms; the last one is the cap (default 250, 500, 1000, 2000, 5000)
   * @param {(ms: number, signal: AbortSignal) => Promise<void>} [options.sleep] how to wait between
   *   reconnects (default: a timer; tests pass their own)
   * @param {(error: Error, input: object) => void} [options.onToolError] told when a registered tool's
   *   answer could not be sent (default: console.warn); a tool that throws is answered as an error instead
   * @param {number} [options.sendRetries=3] how often a send or an edit that failed on the network (or with
   *   408, 429 or a 5xx) is sent again, with the same client message id, waiting `reconnectDelays` between
   */
  constructor(options = {}) {
    this.baseUrl = (options.baseUrl ?? '/api/chat').replace(/\/$/, '');
    this.headers = options.headers ?? {};
    this.csrf = options.csrf ?? null;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.reconnectDelays = options.reconnectDelays ?? [250, 500, 1000, 2000, 5000];
    this.sleep = options.sleep ?? defaultSleep;
    this.onToolError = options.onToolError ?? ((error, input) => console.warn(`Parley: tool ${input.request?.toolName} failed`, error));
    this.sendRetries = options.sendRetries ?? 3;
    /** Registered client tools by name: {spec, handler}. */
    this.tools = new Map();
    /** The client-tool inputs this client has run (`runId/inputId`), so that each runs once. */
    this.toolRuns = new Set();
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

  async request(method, path, body, { signal, headers } = {}) {
    const url = this.baseUrl + path;
    const init = { method, headers: { Accept: 'application/json', ...(await this.headersFor(method, url)), ...headers }, signal };
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
    const { json, text } = await readJson(response);
    if (!response.ok) throw new ParleyError(response.status, json);
    if (json === null && text) {
      throw unexpected(response.status, `expected JSON, got ${response.headers.get('content-type') ?? 'no content type'}`);
    }
    return json;
  }

  // ---- sessions (threads)
  /** One page of sessions, newest activity first: `{items, nextCursor, limit}`; pass `nextCursor` back for the next page (absent on the last). */
  listSessions({ cursor, limit = 50 } = {}) {
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor) query.set('cursor', cursor);
    return this.request('GET', `/sessions?${query}`);
  }
  createSession({ title, modelId, skill } = {}) {
    return this.request('POST', '/sessions', { title, modelId, skill });
  }
  /**
   * The newest page of a session's active branch: `{thread, messages, variants, branches, olderCursor,
   * omittedSteps}`. Each answer comes with its newest steps only (the server's `max-steps-per-answer`);
   * `omittedSteps[answerId]` is how many older steps of that answer the page leaves out (absent: none).
   */
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
  /**
   * The sessions matching `query` (title and message text; every word, "quoted phrases"), best first:
   * `{items: [{thread, snippet, messageId?, highlights}], nextCursor?, limit}`: `highlights` are the places in
   * `snippet` where the query matches, `[{start, end}]` (character offsets, end exclusive, in order), for marking
   * them; `messageId` is the message the snippet is from (absent: the title). A query the server cannot search
   * (no words, too long) is a ParleyError with code INVALID_INPUT.
   */
  searchSessions(query, { cursor, limit = 20 } = {}) {
    const params = new URLSearchParams({ q: query, limit: String(limit) });
    if (cursor) params.set('cursor', cursor);
    return this.request('GET', `/sessions?${params}`);
  }
  /** Where a session's export is served: `format` 'json' (everything) or 'markdown' (the active branch). */
  exportUrl(id, { format = 'json' } = {}) {
    return `${this.baseUrl}/sessions/${encodeURIComponent(id)}/export?format=${encodeURIComponent(format)}`;
  }
  /**
   * Downloads a session's export: `{blob, filename, contentType}` (the file name the server suggests).
   * @throws {ParleyError} for an unknown format (400) or session (404)
   */
  async exportSession(id, { format = 'json', signal } = {}) {
    const url = this.exportUrl(id, { format });
    let response;
    try {
      response = await this.fetch(url, { headers: await this.headersFor('GET', url), signal });
    } catch (e) {
      throw new ParleyError(0, { title: 'Network error', detail: String(e?.message ?? e) });
    }
    if (!response.ok) throw new ParleyError(response.status, (await readJson(response)).json);
    const extension = format === 'markdown' ? 'md' : 'json';
    return {
      blob: await response.blob(),
      filename: dispositionFilename(response.headers.get('content-disposition')) ?? `parley-${id}.${extension}`,
      contentType: response.headers.get('content-type'),
    };
  }

  // ---- runs
  /**
   * Sends a message and starts a run; the registered tools go with it as `clientTools`. The message carries a
   * client message id (`clientMessageId`, a new one unless given), so a send that failed on the network is
   * sent again as is (see `sendRetries`) and the server starts one run however often it arrived: the ticket
   * is the first run's (`replayed: true` when the server had it already).
   */
  startRun(sessionId, { message, modelId, skill, maxIterations, context, attachments, clientMessageId = newClientMessageId() } = {}) {
    return this.sendSafely(`/sessions/${encodeURIComponent(sessionId)}/runs`,
      { message, modelId, skill, maxIterations, context, attachments, clientTools: this.clientTools(), clientMessageId });
  }

  // ---- attachments
  /**
   * Uploads a file (a `File` or `Blob`) to a session, as the raw request body with its type; resolves to the
   * attachment `{id, name, mediaType, size, …}` whose id goes in `startRun`'s `attachments`. With
   * `onProgress(sentBytes, totalBytes)` and where the platform has `XMLHttpRequest` (browsers), progress is
   * reported as the bytes go out; fetch reports none. Rejects with a ParleyError (`400` for a type that may not
   * be attached or contradicts the content, `413` past a limit).
   */
  async uploadAttachment(sessionId, file, { name = file?.name, onProgress, signal } = {}) {
    const url = `${this.baseUrl}/sessions/${encodeURIComponent(sessionId)}/attachments`
      + (name ? `?name=${encodeURIComponent(name)}` : '');
    const headers = { Accept: 'application/json', ...(await this.headersFor('POST', url)) };
    if (file.type) headers['Content-Type'] = file.type;
    if (onProgress && typeof XMLHttpRequest !== 'undefined') {
      return uploadWithProgress(url, headers, file, onProgress, signal);
    }
    let response;
    try {
      response = await this.fetch(url, { method: 'POST', headers, body: file, signal });
    } catch (e) {
      throw new ParleyError(0, { title: 'Network error', detail: String(e?.message ?? e) });
    }
    const { json } = await readJson(response);
    if (!response.ok) throw new ParleyError(response.status, json);
    return json;
  }
  /**
   * What may be attached: `{acceptedTypes, maxFileBytes, maxFilesPerMessage, maxBytesPerMessage, maxBytesPerOwner}`.
   * `acceptedTypes` (for an `<input accept>`) is empty when the runtime takes no files.
   */
  attachmentLimits() {
    return this.request('GET', '/attachment-limits');
  }
  /** Where an attachment is fetched from (an `<img src>`, a link); `download` asks for a download, not a view. */
  attachmentUrl(id, { download = false } = {}) {
    return `${this.baseUrl}/attachments/${encodeURIComponent(id)}${download ? '?download=1' : ''}`;
  }
  /**
   * Edits a user message: a new message beside it, on a new branch that becomes the active one, answered by
   * a new run (its ticket). Sent safely, like startRun.
   */
  editMessage(messageId, { text, modelId, skill, maxIterations, context, clientMessageId = newClientMessageId() } = {}) {
    return this.sendSafely(`/messages/${encodeURIComponent(messageId)}/edit`,
      { text, modelId, skill, maxIterations, context, clientTools: this.clientTools(), clientMessageId });
  }
  /**
   * Rolls the conversation back to an answer ("continue from here"): the session view ends there and the next
   * message starts a new branch; what came after stays on its own branch (`switchBranch` brings it back).
   */
  rollBack(messageId) {
    return this.request('POST', `/messages/${encodeURIComponent(messageId)}/rollback`);
  }
  /**
   * Continues an answer that was stopped, failed or cut off: a new run on the same branch asking the runtime to go
   * on; resolves to its ticket, as startRun.
   */
  continueAnswer(messageId) {
    return this.request('POST', `/messages/${encodeURIComponent(messageId)}/continue`);
  }
  /** Takes the session's last exchange back (kept on its own branch); resolves to the session view. */
  undo(sessionId) {
    return this.request('POST', `/sessions/${encodeURIComponent(sessionId)}/undo`);
  }
  /** Makes the branch through this message (e.g. an edit's sibling) the active one; the thread view, as getSession. */
  switchBranch(messageId) {
    return this.request('POST', `/messages/${encodeURIComponent(messageId)}/activate`);
  }
  /** POSTs a body with a client message id, again after a failure asking again may fix (the id makes it safe). */
  async sendSafely(path, body) {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.request('POST', path, body);
      } catch (e) {
        if (!(e instanceof ParleyError) || !retryable(e.status) || attempt >= this.sendRetries) throw e;
        await this.sleep(this.reconnectDelays[Math.min(attempt, this.reconnectDelays.length - 1)]);
      }
    }
  }
  /** `{run, lastSeq, pendingInputs}`: the run and what waits for the person. */
  state(runId) {
    return this.request('GET', `/runs/${encodeURIComponent(runId)}/state`);
  }
  /** Every input the run waits for, of every kind: `[{runId, inputId, kind, messageId, request, deadline?, createdAt}]`. */
  async pendingInputs(runId) {
    return (await this.state(runId)).pendingInputs ?? [];
  }
  /**
   * Answers a pending input: `{replayed}` (true when the same answer was taken before). `answer` is a
   * string or an array of strings for a clarify question (the older clarify helper, still good), else the
   * answer's JSON: `{decision: 'allow_once'|'allow_for_thread'|'always_allow'|'deny', editedArguments?}`
   * for an approval, `{result, error?}` for a client tool. A different answer after one was taken, or one
   * to an input that expired, is a ParleyError with code CONFLICT.
   */
  answer(runId, inputId, answer) {
    const body = typeof answer === 'string' || Array.isArray(answer) ? { answer } : answer;
    return this.request('POST', `/runs/${encodeURIComponent(runId)}/inputs/${encodeURIComponent(inputId)}`, body);
  }
  cancel(runId) {
    return this.request('POST', `/runs/${encodeURIComponent(runId)}/cancel`);
  }
  /** Answers the same message again; the registered tools go with the new run. */
  regenerate(messageId) {
    const clientTools = this.clientTools();
    return this.request('POST', `/messages/${encodeURIComponent(messageId)}/regenerate`,
      clientTools ? { clientTools } : undefined);
  }
  /**
   * An answer's follow-up suggestions: `{messageId, prompts, pending}`. With `wait` (seconds, 0 to 30) the server
   * holds the request while they are still being made; `pending` true means ask again. A reloaded session view
   * carries them too, on each answer (`suggestions.prompts`).
   */
  suggestions(messageId, { wait = 0, signal } = {}) {
    return this.request('GET', `/messages/${encodeURIComponent(messageId)}/suggestions?wait=${wait}`, undefined, { signal });
  }
  /**
   * The prompts suggested after an answer whose run just ended: asks, waiting up to `wait` seconds each time, until
   * they are stored or none are coming (at most `rounds` times). Resolves to the prompts, empty when there are none.
   */
  async awaitSuggestions(messageId, { wait = 15, rounds = 2, signal } = {}) {
    for (let round = 0; round < rounds; round++) {
      const found = await this.suggestions(messageId, { wait, signal });
      if (!found.pending) return found.prompts ?? [];
    }
    return [];
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

  // ---- tools that run in the page (AG-UI's frontend tools)

  /**
   * Registers a tool the page runs: its spec (`{name, description, parameters: schema}`) goes with every
   * startRun and regenerate, and when a run this client watches calls it (also one found waiting after a
   * reload) the client runs `handler(parsedArguments)` once and answers with its result — a string as
   * is, anything else as JSON; a thrown error is answered as an error result with its message.
   * Returns a function that unregisters the tool.
   *
   * @param {string} name 1 to 64 letters, digits, _ or -
   * @param {object} schema the parameters' JSON Schema (an object)
   * @param {(args: object) => any|Promise<any>} handler
   * @param {{description?: string}} [options] what the tool does, for the model (default: schema.description)
   */
  registerTool(name, schema, handler, { description } = {}) {
    if (typeof handler !== 'function') throw new TypeError('a tool needs a handler function');
    const spec = { name, description: description ?? schema?.description ?? '', parameters: schema ?? { type: 'object' } };
    this.tools.set(name, { spec, handler });
    return () => {
      if (this.tools.get(name)?.handler === handler) this.tools.delete(name);
    };
  }

  /** The registered tools' specs, or undefined when there are none. */
  clientTools() {
    return this.tools.size ? [...this.tools.values()].map((t) => t.spec) : undefined;
  }

  /**
   * Runs every registered tool that the run's state shows waiting (e.g. after a reload); see registerTool.
   * The state, not the stream, decides: a stream replaying a run shows a call before its answer.
   */
  async runPendingTools(runId) {
    if (this.tools.size === 0) return;
    this.runTools(await this.pendingInputs(runId));
  }

  /** runPendingTools, its failure told to onToolError. */
  runPendingToolsQuietly(runId) {
    this.runPendingTools(runId).catch((e) => this.onToolError(e, { runId }));
  }

  /** Whether an event asks for a registered tool. */
  callsRegisteredTool(event) {
    return event.type === 'input_requested' && event.request?.kind === 'client_tool' && this.tools.has(event.request.toolName);
  }

  /** Runs, once each, the client-tool inputs among `inputs` that name a registered tool. */
  runTools(inputs) {
    for (const input of inputs) {
      const tool = input.kind === 'client_tool' ? this.tools.get(input.request?.toolName) : undefined;
      const key = `${input.runId}/${input.inputId}`;
      if (!tool || this.toolRuns.has(key)) continue;
      this.toolRuns.add(key);
      this.runTool(tool, input);
    }
  }

  /** Runs one tool's handler and answers its input; an answer already taken (CONFLICT) is left alone. */
  async runTool(tool, input) {
    let answer;
    try {
      const args = input.request.arguments ? JSON.parse(input.request.arguments) : {};
      const result = await tool.handler(args);
      answer = { result: typeof result === 'string' ? result : JSON.stringify(result ?? null), error: false };
    } catch (e) {
      answer = { result: String(e?.message ?? e), error: true };
    }
    try {
      await this.answer(input.runId, input.inputId, answer);
    } catch (e) {
      if (!(e instanceof ParleyError && e.code === 'CONFLICT')) this.onToolError(e, input); // CONFLICT: answered elsewhere, or expired
    }
  }

  /**
   * Streams a run's events after `after` (a seq) until the run's terminal event, reconnecting with the
   * last seen seq whenever the connection drops, and waiting longer after each reconnect that brought
   * nothing (`reconnectDelays`). When the server closes a stream without the terminal event, the run's
   * state says whether it is over (a cursor at or past its end): then the stream ends.
   *
   * Returns a handle: `close()` stops listening (it never stops the run); `done` resolves to 'ended' (the
   * run is over and every event after `after` was delivered) or 'closed' (closed by `close()` or `signal`),
   * or rejects with a ParleyError for an answer that asking again cannot fix: a 4xx other than 408 and 429
   * (e.g. 404, 401 — with or without a problem body), a 200 that is not an event stream (a login page after
   * a redirect) or a malformed event; `lastSeq` is the cursor.
   *
   * @param {string} runId
   * @param {object} handlers
   * @param {number} [handlers.after=0]
   * @param {(event: object) => void} handlers.onEvent called with each run event, in seq order, once
   * @param {(status: 'connecting'|'open'|'reconnecting'|'ended'|'closed', detail?: object) => void} [handlers.onStatus]
   * @param {AbortSignal} [handlers.signal] closes the stream when aborted, like `close()`
   */
  stream(runId, { after = 0, onEvent, onStatus = () => {}, signal } = {}) {
    const abort = new AbortController();
    const close = () => abort.abort();
    const handle = { lastSeq: after, close };
    signal?.addEventListener('abort', close);
    if (signal?.aborted) close();
    handle.done = (async () => {
      let misses = 0;
      try {
        for (let attempt = 0; !abort.signal.aborted; attempt++) {
          onStatus(attempt === 0 ? 'connecting' : 'reconnecting', { attempt, lastSeq: handle.lastSeq });
          const before = handle.lastSeq;
          let outcome;
          try {
            outcome = await connect(this, runId, handle, onEvent, onStatus, abort.signal);
            if (outcome === 'closed' && !abort.signal.aborted && await this.runIsOver(runId, handle.lastSeq, abort.signal)) {
              outcome = 'ended';
            }
          } catch (e) {
            if (abort.signal.aborted) break;
            onStatus('closed', { error: e, lastSeq: handle.lastSeq });
            throw e;
          }
          if (outcome === 'ended') {
            onStatus('ended', { lastSeq: handle.lastSeq });
            return 'ended';
          }
          if (abort.signal.aborted) break;
          misses = handle.lastSeq > before ? 0 : misses + 1;
          const delays = this.reconnectDelays;
          const delay = delays[Math.min(Math.max(misses - 1, 0), delays.length - 1)];
          onStatus('reconnecting', { attempt: attempt + 1, lastSeq: handle.lastSeq, delay });
          await this.sleep(delay, abort.signal);
        }
        onStatus('closed', { lastSeq: handle.lastSeq });
        return 'closed';
      } finally {
        signal?.removeEventListener('abort', close);
      }
    })();
    return handle;
  }

  /**
   * Whether a run whose stream closed without its terminal event is over, with nothing after `lastSeq`.
   * False when the state cannot be read for now (it is asked again after the next reconnect).
   *
   * @throws {ParleyError} for an answer that asking again cannot fix (e.g. 404: the run is gone)
   */
  async runIsOver(runId, lastSeq, signal) {
    let state;
    try {
      state = await this.request('GET', `/runs/${encodeURIComponent(runId)}/state`, undefined, { signal });
    } catch (e) {
      if (e instanceof ParleyError && !retryable(e.status)) throw e;
      return false;
    }
    return TERMINAL_RUN_STATUSES.has(state?.run?.status) && Number(state.lastSeq) <= lastSeq;
  }

  /**
   * Follows a run through a reducer: `onChange(reducer, event)` after every event. Pass the reducer of
   * a run already partly shown (and its lastSeq as `after`) to continue it. Registered tools the run
   * calls are run (see registerTool), once the state confirms the call still waits; continuing after a
   * seq, the state is asked for calls already waiting.
   *
   * With `onSuggestions(prompts, answerId)`, once the run SUCCEEDED the answer's follow-up suggestions are
   * fetched (a run's stream ends at its terminal event; they are made after it, see awaitSuggestions) and handed
   * over when there are any; `handle.suggestions` resolves to them (empty when none come, or on any error).
   */
  watch(runId, { after, reducer = new RunReducer(), onChange = () => {}, onStatus, onSuggestions, signal } = {}) {
    const from = after ?? reducer.lastSeq;
    const handle = this.stream(runId, {
      after: from,
      onStatus,
      signal,
      onEvent: (event) => {
        reducer.apply(event);
        onChange(reducer, event);
        if (this.callsRegisteredTool(event.event)) this.runPendingToolsQuietly(runId);
      },
    });
    if (from > 0) this.runPendingToolsQuietly(runId);
    handle.reducer = reducer;
    if (onSuggestions) {
      handle.suggestions = handle.done.then(async (outcome) => {
        if (outcome !== 'ended' || reducer.status !== 'SUCCEEDED') return [];
        const answer = reducer.messages().find((m) => m.type === 'assistant');
        if (!answer) return [];
        const prompts = await this.awaitSuggestions(answer.id, { signal });
        if (prompts.length > 0) onSuggestions(prompts, answer.id);
        return prompts;
      }).catch(() => []);
    }
    return handle;
  }
}

/**
 * One connection to a run's stream: resolves 'ended' after the terminal event, 'closed' when a 200 event
 * stream ended without it, 'failed' for a network error or an answer worth asking again (408, 429, 5xx);
 * throws a ParleyError for any other answer. Its own AbortController is linked to `signal` only while it
 * runs, so reconnecting leaves no listener behind.
 */
async function connect(client, runId, handle, onEvent, onStatus, signal) {
  const attempt = new AbortController();
  const abort = () => attempt.abort();
  signal.addEventListener('abort', abort);
  try {
    const url = `${client.baseUrl}/runs/${encodeURIComponent(runId)}/stream?lastEventId=${handle.lastSeq}`;
    let response;
    try {
      response = await client.fetch(url, {
        headers: {
          Accept: 'text/event-stream',
          'Last-Event-ID': String(handle.lastSeq),
          ...(await client.headersFor('GET', url)),
        },
        signal: attempt.signal,
      });
    } catch {
      return 'failed';
    }
    if (!response.ok) {
      const { json } = await readJson(response);
      if (retryable(response.status)) return 'failed';
      throw new ParleyError(response.status, json);
    }
    const type = response.headers.get('content-type') ?? '';
    if (!type.toLowerCase().startsWith('text/event-stream')) {
      response.body?.cancel().catch(() => {});
      throw unexpected(response.status, `expected an event stream, got ${type || 'no content type'}`);
    }
    onStatus('open', { lastSeq: handle.lastSeq });
    try {
      return await readEvents(response.body, (event) => {
        if (event.seq <= handle.lastSeq) return false;
        handle.lastSeq = event.seq;
        onEvent(event);
        return isTerminal(event.event);
      });
    } catch (e) {
      if (e instanceof ParleyError) throw e;
      return 'failed';
    }
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/**
 * Reads an SSE body, calling `deliver` with each parsed run event; `deliver` returns true at the terminal
 * event. Resolves 'ended' when the terminal event was read, 'closed' when the body ended before; rejects
 * with a ParleyError for an event that is not a run event, and with the read's error when the connection
 * broke.
 */
/** An upload through XMLHttpRequest, whose upload events say how far it got. */
function uploadWithProgress(url, headers, file, onProgress, signal) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    for (const [key, value] of Object.entries(headers)) xhr.setRequestHeader(key, value);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let json = null;
      try { json = xhr.responseText ? JSON.parse(xhr.responseText) : null; } catch { json = null; }
      if (xhr.status >= 200 && xhr.status < 300) resolve(json);
      else reject(new ParleyError(xhr.status, json));
    };
    xhr.onerror = () => reject(new ParleyError(0, { title: 'Network error', detail: 'the upload failed' }));
    xhr.onabort = () => reject(new ParleyError(0, { title: 'Aborted', detail: 'the upload was aborted' }));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

async function readEvents(body, deliver) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'closed';
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        let line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length > 0) {
            const event = parseEvent(data.join('\n'));
            data = [];
            if (deliver(event)) return 'ended';
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

function parseEvent(text) {
  let event;
  try {
    event = JSON.parse(text);
  } catch {
    throw unexpected(200, `an event stream with an event that is not JSON: ${text.slice(0, 80)}`);
  }
  if (!Number.isSafeInteger(event?.seq) || typeof event.event !== 'object' || event.event === null) {
    throw unexpected(200, `an event stream with an event that is not a run event: ${text.slice(0, 80)}`);
  }
  return event;
}
