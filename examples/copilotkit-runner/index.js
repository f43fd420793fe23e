// ParleyAgentRunner: an AgentRunner for CopilotKit's Node runtime (@copilotkit/runtime 1.75, v2) that keeps the
// threads in Parley instead of the runtime's memory. Every run goes through Parley's CopilotKit endpoint, which
// stores it and keeps it going when the page's stream drops; connect asks Parley for the thread, so a restarted
// runtime, or any other instance, shows it; stop reaches the run wherever it is. See README.md.
import { AsyncLocalStorage } from 'node:async_hooks';
import { AgentRunner, resolveAgents } from '@copilotkit/runtime/v2';
import { Observable } from 'rxjs';

/** The AG-UI events that end a run. */
const TERMINAL = new Set(['RUN_FINISHED', 'RUN_ERROR']);

/**
 * The runtime's built-in denylist (@copilotkit/runtime 1.75, `header-utils`): headers a proxy, a CDN or a hosting
 * platform adds, never the caller's own. A stop request's headers go to Parley by the runtime's own
 * `forwardHeadersPolicy` when the hooks see the runtime (as run and connect do), else by this default.
 */
const DEFAULT_DENY_HEADER_NAMES = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host',
  'x-forwarded-port', 'x-forwarded-server', 'x-real-ip', 'x-amzn-trace-id', 'x-amz-cf-id', 'x-cloud-trace-context',
  'x-cache', 'x-served-by', 'x-request-id', 'x-copilotcloud-public-api-key']);
const DEFAULT_DENY_HEADER_PREFIXES = ['x-amz-', 'x-azure-', 'x-fastly-', 'x-vercel-', 'x-middleware-',
  'x-copilotcloud-'];
/** The runtime's policy without `forwardHeaders` configured: its built-in denylist. */
const DEFAULT_FORWARD_POLICY = Object.freeze({ useDefaultDenylist: true, denyNames: new Set(), denyPrefixes: [],
  allow: undefined });

/** An answer from Parley that is not what the call needs, or Parley out of reach. */
export class ParleyRunnerError extends Error {
  /**
   * @param {string} message
   * @param {{status?: number, body?: string, url: string, cause?: unknown}} details
   */
  constructor(message, { status, body, url, cause }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ParleyRunnerError';
    /** The HTTP status Parley answered with; undefined when it could not be reached. */
    this.status = status;
    /** Parley's answer body (its JSON error, `{error, message, code}`), as text. */
    this.body = body;
    /** The URL called. */
    this.url = url;
  }
}

/**
 * @typedef {object} ParleyAgentRunnerOptions
 * @property {string} url Parley's CopilotKit endpoint: `{host}{parley.web.base-path}{parley.web.copilotkit.path}`,
 *   by default `https://chat.example.com/api/chat/copilotkit`.
 * @property {string} [agentId] the agent on Parley's side; Parley's one agent is `default` (the default).
 * @property {Record<string, string> | ((call: HeaderCall) => Record<string, string> | Promise<Record<string, string>>)} [headers]
 *   headers for every call to Parley. An object is added to the caller's headers, winning over them; a function
 *   gets the call and the caller's headers and returns every header to send.
 * @property {typeof fetch} [fetch] the fetch to call Parley with (default: the global fetch).
 * @property {number} [rememberThreads] how many threads' callers are kept for stop (default 10 000); see `stop`.
 */

/**
 * @typedef {object} HeaderCall
 * @property {'run' | 'connect' | 'stop'} operation
 * @property {string} threadId
 * @property {Record<string, string>} headers the caller's headers: what the runtime forwards for this call
 */

/**
 * An `AgentRunner` whose threads live in Parley. Give it to the runtime in place of its in-memory runner:
 *
 * ```js
 * const runner = new ParleyAgentRunner({ url: 'https://chat.example.com/api/chat/copilotkit' });
 * const runtime = new CopilotRuntime({ agents: { default: runner.agent() }, runner });
 * createCopilotNodeListener({ runtime, basePath: '/api/copilotkit', hooks: runner.hooks });
 * ```
 */
export class ParleyAgentRunner extends AgentRunner {
  /** @type {string} */ #base;
  /** @type {string} */ #agentId;
  /** @type {ParleyAgentRunnerOptions['headers']} */ #headers;
  /** @type {typeof fetch} */ #fetch;
  /** @type {number} */ #remember;
  /**
   * Without hooks: the caller of each thread's newest run or connect that Parley started a run for (its owner),
   * oldest first. Empty once the hooks are seen.
   */
  /** @type {Map<string, Record<string, string>>} */ #callers = new Map();
  /**
   * The stop request being handled, as `hooks` saw it: `{threadId, headers}`, headers a promise. Set in the
   * request's own async context, so concurrent requests never see each other's.
   */
  #stopRequest = new AsyncLocalStorage();
  /** Whether `hooks` is installed: then a stop acts only for its own caller. */
  #hooked = false;
  /** Runs this instance relays between their RUN_STARTED and their end, per thread. */
  /** @type {Map<string, number>} */ #relaying = new Map();

  /** @param {ParleyAgentRunnerOptions} options */
  constructor(options) {
    super();
    if (!options || typeof options.url !== 'string' || !options.url) {
      throw new TypeError('ParleyAgentRunner needs { url }: Parley\'s CopilotKit endpoint, e.g. '
        + 'https://chat.example.com/api/chat/copilotkit');
    }
    this.#base = options.url.replace(/\/+$/, '');
    this.#agentId = options.agentId ?? 'default';
    this.#headers = options.headers;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#remember = options.rememberThreads ?? 10_000;
    const runner = this;
    /**
     * Hooks for the runtime's handler (`createCopilotNodeListener`, `createCopilotRuntimeHandler`, the Express and
     * Hono endpoints: option `hooks`). The runtime hands a runner's `stop` no request; with these hooks the runner
     * takes the stop request's own headers (as the runtime forwards them on run and connect) to Parley, so a stop
     * acts for its caller. Without them it acts for the caller of the thread's newest run or connect here.
     */
    this.hooks = {
      /** @param {{request: Request, route?: {method?: string, threadId?: string}, runtime?: any}} context */
      onBeforeHandler({ request, route, runtime }) {
        if (!runner.#hooked) runner.#callers.clear();
        runner.#hooked = true;
        if (route?.method !== 'agent/stop' || !route.threadId) return undefined;
        const headers = (async () => {
          let agentHeaders = {};
          try {
            const agents = runtime ? await resolveAgents(runtime.agents, request) : {};
            agentHeaders = agents?.[route.agentId ?? 'default']?.headers ?? {};
          } catch {
            // an agent factory that fails here fails the stop itself, as the runtime calls it again
          }
          return forwardable(agentHeaders, request.headers, isPolicy(runtime?.forwardHeadersPolicy)
            ? runtime.forwardHeadersPolicy : DEFAULT_FORWARD_POLICY);
        })();
        // synchronously, before anything is awaited: the rest of this request's handling (the runtime's stop
        // handler and so this runner's stop) runs in the context entered here
        runner.#stopRequest.enterWith({ threadId: route.threadId, headers });
        return undefined;
      },
    };
  }

  /**
   * An agent to register under the runtime's `agents` (the runtime needs one for every agent id it serves: for
   * `/info` and to find the agent of a request). The runner never runs it; its `headers` are sent to Parley with
   * the caller's on every run and connect, as the runtime merges them.
   *
   * @param {{description?: string, headers?: Record<string, string>}} [options]
   */
  agent({ description = 'An agent on Parley', headers = {} } = {}) {
    return new ParleyAgent(description, headers);
  }

  /**
   * A run: the runtime's `RunAgentInput` posted to Parley's `/agent/{agentId}/run`, Parley's AG-UI events
   * passed on as they come. Parley stores the run; the page's stream dropping (the runtime unsubscribing) only
   * closes the request, the run goes on and `connect` re-joins it.
   *
   * @param {import('@copilotkit/runtime/v2').AgentRunnerRunRequest} request
   * @returns {Observable<import('@ag-ui/client').BaseEvent>}
   */
  run(request) {
    const forwarded = { ...(request.agent?.headers ?? {}) };
    return this.#stream('run', request.threadId, forwarded, request.input);
  }

  /**
   * A connect: Parley's `/agent/{agentId}/connect` for the thread, its events passed on. A thread at rest is its
   * snapshot; a thread whose run goes on, wherever it was started, is the snapshot and the run's events to its
   * end. Unknown threads and other owners' are an empty stream, as Parley answers.
   *
   * @param {import('@copilotkit/runtime/v2').AgentRunnerConnectRequest} request
   * @returns {Observable<import('@ag-ui/client').BaseEvent>}
   */
  connect(request) {
    const input = { threadId: request.threadId, runId: crypto.randomUUID(), messages: [], tools: [], context: [],
      state: {}, forwardedProps: {} };
    return this.#stream('connect', request.threadId, { ...(request.headers ?? {}) }, input);
  }

  /**
   * Whether a run of the thread is going on, as far as this instance knows: a run or a connect it relays is
   * between its `RUN_STARTED` and its end. A run started through another instance and not followed here is not
   * seen (the runtime hands `isRunning` no caller to ask Parley with; CopilotKit's handlers do not call it).
   *
   * @param {{threadId: string}} request
   */
  async isRunning({ threadId }) {
    return (this.#relaying.get(threadId) ?? 0) > 0;
  }

  /**
   * A stop: Parley's `/agent/{agentId}/stop/{threadId}` with `{runId}`. Parley cancels the thread's working run
   * wherever it runs, keeps its partial answer and ends its streams with `RUN_FINISHED`. Acts for the stop
   * request's caller when `hooks` is installed, else for the caller of the thread's newest run or connect on this
   * instance (none known: no caller headers are sent, and Parley answers 401).
   *
   * @param {{threadId: string, runId?: string}} request
   * @returns {Promise<boolean>} whether Parley stopped a run
   * @throws {ParleyRunnerError} when Parley refuses or cannot be reached
   */
  async stop({ threadId, runId }) {
    const stopRequest = this.#stopRequest.getStore();
    let caller;
    const url = `${this.#base}/agent/${encodeURIComponent(this.#agentId)}/stop/${encodeURIComponent(threadId)}`;
    if (stopRequest?.threadId === threadId) {
      caller = await stopRequest.headers;
    } else if (this.#hooked) {
      // the hooks are installed but did not see this stop (called after an await in a host's own async hook, or
      // stop called from outside a request): sending it without its caller's credentials would act for nobody
      throw new ParleyRunnerError(`the stop request for thread ${threadId} was not seen by runner.hooks: call `
        + 'runner.hooks.onBeforeHandler synchronously from the handler\'s hooks, before anything is awaited', { url });
    } else {
      caller = this.#callers.get(threadId) ?? {};
    }
    const headers = await this.#headersFor('stop', threadId, caller);
    const response = await this.#call(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(runId === undefined ? {} : { runId }) });
    const text = await response.text();
    if (!response.ok) throw refused(url, response.status, text);
    let answer;
    try {
      answer = JSON.parse(text);
    } catch (error) {
      throw new ParleyRunnerError(`Parley answered POST ${url} with something that is not JSON: ${text.slice(0, 200)}`,
        { status: response.status, body: text, url, cause: error });
    }
    return answer?.stopped === true;
  }

  /** The headers of a call: the caller's, then the `headers` option. */
  async #headersFor(operation, threadId, caller) {
    if (typeof this.#headers === 'function') {
      return { ...(await this.#headers({ operation, threadId, headers: { ...caller } })) };
    }
    const headers = { ...caller };
    for (const [name, value] of Object.entries(this.#headers ?? {})) {
      for (const key of Object.keys(headers)) if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
      headers[name] = value;
    }
    return headers;
  }

  async #call(url, init) {
    try {
      return await this.#fetch(url, init);
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new ParleyRunnerError(`Parley cannot be reached at ${url}: ${error?.cause?.message ?? error?.message ?? error}`,
        { url, cause: error });
    }
  }

  /** Keeps the caller Parley accepted for the thread, the newest last, at most `rememberThreads` of them. */
  #rememberCaller(threadId, caller) {
    this.#callers.delete(threadId);
    this.#callers.set(threadId, caller);
    while (this.#callers.size > this.#remember) this.#callers.delete(this.#callers.keys().next().value);
  }

  #relay(threadId, delta) {
    const count = (this.#relaying.get(threadId) ?? 0) + delta;
    if (count > 0) this.#relaying.set(threadId, count);
    else this.#relaying.delete(threadId);
  }

  /**
   * POSTs `input` to Parley's `/agent/{agentId}/{operation}` and relays the SSE answer's events. A refusal, an
   * unreachable Parley or a broken stream ends the stream with one `RUN_ERROR` saying what happened (the page shows
   * it as the run's error, and the runtime logs it); unsubscribing aborts the request.
   */
  #stream(operation, threadId, caller, input) {
    const url = `${this.#base}/agent/${encodeURIComponent(this.#agentId)}/${operation}`;
    return new Observable((subscriber) => {
      const abort = new AbortController();
      let started = false;
      let ended = false;
      // the newest RUN_STARTED / RUN_FINISHED / RUN_ERROR passed on was a terminal one: the run's end is told
      let terminalSeen = false;
      let inRun = false;
      const relayEnd = () => {
        if (started && !ended) this.#relay(threadId, -1);
        ended = true;
      };
      const emit = (event) => {
        if (event.type === 'RUN_STARTED' && !started) {
          started = true;
          this.#relay(threadId, +1);
        }
        if (event.type === 'RUN_STARTED') {
          inRun = true;
          terminalSeen = false;
        }
        if (TERMINAL.has(event.type)) {
          relayEnd();
          inRun = false;
          terminalSeen = true;
        }
        subscriber.next(event);
      };
      const fail = (error) => {
        relayEnd();
        if (subscriber.closed) return;
        // after the run's own end (e.g. the connection reset after RUN_FINISHED) a second end would contradict it
        if (!terminalSeen) {
          subscriber.next({ type: 'RUN_ERROR', message: error.message,
            code: error.code ?? (error.status === undefined ? 'PARLEY_UNREACHABLE' : `PARLEY_HTTP_${error.status}`) });
        }
        subscriber.complete();
      };
      (async () => {
        const headers = await this.#headersFor(operation, threadId, caller);
        const response = await this.#call(url, { method: 'POST', signal: abort.signal,
          headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(input) });
        if (!response.ok) throw refused(url, response.status, await response.text());
        const type = response.headers.get('content-type') ?? '';
        if (!type.startsWith('text/event-stream')) {
          const body = await response.text();
          throw new ParleyRunnerError(`Parley answered POST ${url} with ${response.status} ${type || 'no content type'}`
            + `, not an event stream: ${body.slice(0, 200)}`, { status: response.status, body, url });
        }
        for await (const event of sseEvents(response.body, url)) {
          // Parley starts a run only for the thread's owner (a refused input can be a lone RUN_ERROR, sent before
          // ownership is checked): this caller is the one a stop without hooks acts for. With hooks, a stop takes
          // its own caller's headers, so none are kept.
          if (event.type === 'RUN_STARTED' && !this.#hooked) this.#rememberCaller(threadId, caller);
          if (subscriber.closed) return;
          emit(event);
        }
        if (inRun) {
          // a stream that ends cleanly mid-run (a proxy closing it, Parley going away) ends the run with an error
          const error = new ParleyRunnerError(`Parley's ${operation} stream for thread ${threadId} ended before the `
            + 'run did (no RUN_FINISHED or RUN_ERROR); connect again to follow it', { url });
          error.code = 'PARLEY_STREAM_ENDED';
          throw error;
        }
        relayEnd();
        subscriber.complete();
      })().catch((error) => {
        if (abort.signal.aborted) return relayEnd();
        fail(error instanceof ParleyRunnerError ? error : new ParleyRunnerError(
          `Parley's ${operation} stream for thread ${threadId} broke: ${error?.message ?? error}`, { url, cause: error }));
      });
      return () => {
        relayEnd();
        abort.abort();
      };
    });
  }
}

/**
 * The agent registered beside the runner: it names the agent in `/info` and carries headers for Parley. Running
 * it directly (outside the runner) is refused: its runs belong to Parley.
 */
class ParleyAgent {
  constructor(description, headers) {
    this.description = description;
    this.headers = { ...headers };
    this.agentId = undefined;
    this.threadId = undefined;
    this.messages = [];
    this.state = {};
  }

  clone() {
    const copy = new ParleyAgent(this.description, this.headers);
    copy.agentId = this.agentId;
    return copy;
  }

  setMessages(messages) {
    this.messages = [...(messages ?? [])];
  }

  setState(state) {
    this.state = state ?? {};
  }

  async runAgent() {
    throw new Error('A Parley agent runs through ParleyAgentRunner: give the runtime `runner: <the ParleyAgentRunner>`');
  }

  abortRun() {
  }
}

/** Whether `policy` looks like the runtime's resolved `forwardHeadersPolicy` (its shape in 1.75). */
function isPolicy(policy) {
  return policy != null && typeof policy === 'object' && policy.denyNames instanceof Set
    && Array.isArray(policy.denyPrefixes) && (policy.allow === undefined || policy.allow instanceof Set);
}

function refused(url, status, body) {
  let detail = body;
  try {
    const json = JSON.parse(body);
    const what = [json.error, json.message ?? json.details ?? json.detail].filter(Boolean).join(': ');
    detail = what ? what + (json.code ? ` (${json.code})` : '') : body;
  } catch {
    // not JSON: the text as it is
  }
  return new ParleyRunnerError(`Parley answered ${status} to POST ${url}: ${String(detail).slice(0, 500)}`,
    { status, body, url });
}

/**
 * The caller's headers on a stop request, as the runtime merges them for run and connect (its
 * `mergeForwardableHeaders`): the agent's own headers (the first of two spellings of one name wins), then the
 * request's headers that `policy` forwards and the agent does not set.
 *
 * @param {Record<string, string>} agentHeaders
 * @param {Headers} headers
 * @param {{useDefaultDenylist?: boolean, denyNames?: Set<string>, denyPrefixes?: string[], allow?: Set<string>}} policy
 *   the runtime's resolved `forwardHeadersPolicy`
 */
function forwardable(agentHeaders, headers, policy) {
  const out = {};
  const taken = new Set();
  for (const [name, value] of Object.entries(agentHeaders ?? {})) {
    const lower = name.toLowerCase();
    if (taken.has(lower)) continue;
    taken.add(lower);
    out[name] = value;
  }
  headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (!taken.has(lower) && shouldForwardHeader(lower, policy)) out[lower] = value;
  });
  return out;
}

/**
 * The runtime's rule (@copilotkit/runtime 1.75, `shouldForwardHeader`, not exported by it): with an `allow` list,
 * the names in it minus the integrator's `deny`/`denyPrefixes`; else `authorization` and `x-*`, minus the built-in
 * denylist (unless `useDefaultDenylist: false`) and the integrator's `deny`/`denyPrefixes`.
 */
function shouldForwardHeader(lower, policy) {
  const denied = (policy.denyNames?.has(lower) ?? false)
    || (policy.denyPrefixes ?? []).some((prefix) => lower.startsWith(prefix));
  if (policy.allow) return policy.allow.has(lower) && !denied;
  if (lower !== 'authorization' && !lower.startsWith('x-')) return false;
  if (policy.useDefaultDenylist !== false && (DEFAULT_DENY_HEADER_NAMES.has(lower)
    || DEFAULT_DENY_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix)))) return false;
  return !denied;
}

/**
 * The events of an SSE body: each event's `data:` lines joined, parsed as JSON; comments and other fields
 * skipped.
 *
 * @param {ReadableStream<Uint8Array>} body
 * @param {string} url
 */
async function* sseEvents(body, url) {
  const decoder = new TextDecoder();
  let buffer = '';
  let data = [];
  const flush = function* () {
    if (data.length) {
      const text = data.join('\n');
      data = [];
      let event;
      try {
        event = JSON.parse(text);
      } catch (error) {
        throw new ParleyRunnerError(`Parley sent an event that is not JSON on ${url}: ${text.slice(0, 200)}`,
          { url, cause: error });
      }
      yield event;
    }
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer[newline] === '\r' && buffer[newline + 1] === '\n' ? 2 : 1));
      if (line === '') {
        yield* flush();
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
    }
  }
  buffer += decoder.decode();
  if (buffer.startsWith('data:')) data.push(buffer.slice(buffer[5] === ' ' ? 6 : 5));
  yield* flush();
}
