// The browser client against a live Parley server (started by BrowserClientNodeTest; node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { ParleyClient, ParleyError, RunReducer } from '../../main/resources/META-INF/resources/parley/parley-client.js';

const baseUrl = process.env.PARLEY_BASE_URL;
assert.ok(baseUrl, 'PARLEY_BASE_URL must point at a running server');

const client = (owner = 'node-alice', extra = {}) =>
  new ParleyClient({ baseUrl, headers: { 'X-Parley-Owner': owner }, reconnectDelays: [20, 50, 100], ...extra });

async function watchToEnd(c, runId, options = {}) {
  const statuses = [];
  const handle = c.watch(runId, { ...options, onStatus: (s) => statuses.push(s) });
  const outcome = await handle.done;
  return { reducer: handle.reducer, outcome, statuses, lastSeq: handle.lastSeq };
}

const runMessages = (view, runId) => view.messages.filter((m) => m.runId === runId);

test('sessions are created, listed, renamed and deleted', async () => {
  const c = client('node-sessions');
  const a = await c.createSession({ title: 'First' });
  const b = await c.createSession();
  const page = await c.listSessions({ limit: 10 });
  assert.deepEqual(page.items.map((t) => t.id).sort(), [a.id, b.id].sort());
  const renamed = await c.updateSession(b.id, { title: 'Renamed', archived: true });
  assert.equal(renamed.title, 'Renamed');
  assert.equal(renamed.status, 'ARCHIVED');
  await c.deleteSession(a.id);
  const after = await c.listSessions();
  assert.deepEqual(after.items.map((t) => t.id), [b.id]);
  assert.equal(after.nextCursor, undefined, 'no cursor on the last page');
});

test('sessions are paged with the cursor each page gives', async () => {
  const c = client('node-pager');
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await c.createSession()).id);
  const first = await c.listSessions({ limit: 2 });
  assert.equal(first.items.length, 2);
  assert.ok(first.nextCursor, 'a cursor for the next page');
  const second = await c.listSessions({ cursor: first.nextCursor, limit: 2 });
  assert.equal(second.nextCursor, undefined);
  assert.deepEqual([...first.items, ...second.items].map((t) => t.id).sort(), ids.sort());
});

test('a run streams through the reducer to exactly the stored messages', async () => {
  const c = client();
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'tools please' });
  const { reducer, outcome, statuses } = await watchToEnd(c, ticket.runId);
  assert.equal(outcome, 'ended');
  assert.equal(reducer.status, 'SUCCEEDED');
  assert.ok(statuses.includes('open') && statuses.includes('ended'));
  const view = await c.getSession(session.id);
  assert.deepEqual(reducer.messages(), runMessages(view, ticket.runId));
  assert.ok(reducer.messages().some((m) => m.type === 'action_execution' && m.name === 'web_search'));
  assert.ok(reducer.messages().some((m) => m.type === 'todo'));
});

test('a clarify is answered through the client and the run goes on', async () => {
  const c = client();
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'clarify please' });
  let answered = false;
  const handle = c.watch(ticket.runId, {
    onChange: (reducer) => {
      const [pending] = reducer.pendingInputs();
      if (pending && !answered) {
        answered = true;
        assert.equal(pending.kind, 'clarify');
        assert.deepEqual(pending.request.choices, ['Paris', 'Rome']);
        c.answer(ticket.runId, pending.inputId, 'Rome').catch((e) => assert.fail(e));
      }
    },
  });
  assert.equal(await handle.done, 'ended');
  assert.equal(handle.reducer.message(ticket.assistantMessageId).text, 'You chose Rome.');
  const again = await c.answer(ticket.runId, 'ask-1', 'Rome');
  assert.equal(again.replayed, true);
  await assert.rejects(c.answer(ticket.runId, 'ask-1', 'Paris'), (e) => e instanceof ParleyError && e.code === 'CONFLICT');
});

test('an approval is listed with its kind and allowed with edited arguments through the client', async () => {
  const c = client();
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'refund {"order":770}' });
  let decided = null;
  const handle = c.watch(ticket.runId, {
    onChange: (reducer) => {
      const [pending] = reducer.pendingInputs();
      if (pending && !decided) {
        decided = pending;
        c.answer(ticket.runId, pending.inputId, { decision: 'allow_once', editedArguments: { order: 771 } })
          .catch((e) => assert.fail(e));
      }
    },
  });
  assert.equal(await handle.done, 'ended');
  assert.equal(decided.kind, 'approval');
  assert.equal(decided.request.toolName, 'refund_order');
  assert.deepEqual(decided.request.decisions, ['allow_once', 'deny']);
  assert.equal(handle.reducer.message(ticket.assistantMessageId).text, 'The tool said: refunded {"order":771}');
  const approval = handle.reducer.messages().find((m) => m.type === 'approval');
  assert.equal(approval.decision, 'allow_once');
  assert.equal(approval.editedArguments, '{"order":771}');
  assert.deepEqual(handle.reducer.pendingInputs(), []);
  const view = await c.getSession(session.id);
  assert.deepEqual(handle.reducer.messages(), runMessages(view, ticket.runId));
  const again = await c.answer(ticket.runId, decided.inputId, { decision: 'allow_once', editedArguments: '{"order":771}' });
  assert.equal(again.replayed, true);
  await assert.rejects(c.answer(ticket.runId, decided.inputId, { decision: 'deny' }), (e) => e.code === 'CONFLICT');
});

test('pendingInputs lists what a run waits for, as the reducer does', async () => {
  const c = client();
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'refund {"order":880}' });
  let listed = [];
  while (listed.length === 0) {
    listed = await c.pendingInputs(ticket.runId);
    await new Promise((r) => setTimeout(r, 10));
  }
  const { reducer } = await (async () => {
    const r = new RunReducer();
    const h = c.stream(ticket.runId, { onEvent: (e) => { r.apply(e); if (r.pendingInputs().length) h.close(); } });
    await h.done;
    return { reducer: r };
  })();
  assert.deepEqual(reducer.pendingInputs(), listed, 'the live reducer and the state agree');
  assert.equal(listed[0].kind, 'approval');
  assert.equal((await c.answer(ticket.runId, listed[0].inputId, { decision: 'deny' })).replayed, false);
  const { reducer: done } = await watchToEnd(c, ticket.runId);
  assert.equal(done.message(ticket.assistantMessageId).text, 'The tool failed: the person denied this call of refund_order');
});

test('a registered tool goes with startRun and regenerate and runs once per call, its error as an error', async () => {
  const sent = [];
  const c = client('node-tools', {
    fetch: async (url, init) => {
      if (init?.method === 'POST') sent.push({ url: String(url), body: init.body ? JSON.parse(init.body) : undefined });
      return fetch(url, init);
    },
  });
  const calls = [];
  c.registerTool('get_local_time', { type: 'object', properties: { zone: { type: 'string' } } }, async (args) => {
    calls.push(args);
    if (calls.length === 2) throw new Error('no clock here');
    return { time: '12:00', zone: args.zone };
  }, { description: 'The local time' });
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'client tool get_local_time' });
  const first = await watchToEnd(c, ticket.runId);
  assert.equal(first.reducer.message(ticket.assistantMessageId).text, 'The page said: {"time":"12:00","zone":"local"}');
  assert.deepEqual(calls, [{ zone: 'local' }]);
  assert.deepEqual(sent.find((r) => r.url.endsWith('/runs')).body.clientTools, [{ name: 'get_local_time',
    description: 'The local time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } }]);
  const result = first.reducer.messages().find((m) => m.type === 'result');
  assert.equal(result.result, '{"time":"12:00","zone":"local"}');

  const regenerated = await c.regenerate(ticket.assistantMessageId);
  assert.equal(sent.at(-1).body.clientTools[0].name, 'get_local_time', 'regenerate sends the tools too');
  const second = await watchToEnd(c, regenerated.runId);
  assert.equal(second.reducer.message(regenerated.assistantMessageId).text, 'The page failed: no clock here');
  assert.equal(calls.length, 2);

  const replayed = await watchToEnd(c, ticket.runId);
  assert.equal(replayed.outcome, 'ended');
  assert.equal(calls.length, 2, 'a replayed run does not call the tool again');
});

test('a tool call found waiting after a reload is run by the new page', async () => {
  const before = client('node-reload');
  before.registerTool('get_local_time', { type: 'object' }, () => new Promise(() => {})); // the page that left
  const session = await before.createSession();
  const ticket = await before.startRun(session.id, { message: 'client tool get_local_time' });
  let state;
  do {
    state = await before.state(ticket.runId);
  } while (state.pendingInputs.length === 0);
  assert.equal(state.pendingInputs[0].kind, 'client_tool');

  const after = client('node-reload');
  const calls = [];
  after.registerTool('get_local_time', { type: 'object' }, (args) => {
    calls.push(args);
    return 'ten past two';
  });
  const handle = after.watch(ticket.runId, { after: state.lastSeq });
  assert.equal(await handle.done, 'ended');
  assert.equal(calls.length, 1);
  const view = await after.getSession(session.id);
  assert.equal(view.messages.find((m) => m.id === ticket.assistantMessageId).text, 'The page said: ten past two');
});

/** Watches a run and stops it as soon as its partial answer shows. */
async function watchAndStop(c, ticket) {
  let stopped = false;
  const handle = c.watch(ticket.runId, {
    onChange: (reducer) => {
      if (!stopped && reducer.message(ticket.assistantMessageId)?.text === 'Partial answer') {
        stopped = true;
        c.cancel(ticket.runId).catch((e) => assert.fail(e));
      }
    },
  });
  assert.equal(await handle.done, 'ended');
  return handle.reducer;
}

test('stop keeps the partial answer; regenerate and feedback work', async () => {
  const c = client();
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'wait for me' });
  const stopped = await watchAndStop(c, ticket);
  assert.equal(stopped.status, 'CANCELLED');
  assert.equal(stopped.message(ticket.assistantMessageId).status, 'CANCELLED');

  const regenerated = await c.regenerate(ticket.assistantMessageId);
  assert.equal((await watchAndStop(c, regenerated)).status, 'CANCELLED');
  const view = await c.messages(session.id, { limit: 10 });
  assert.equal(view.variants[ticket.assistantMessageId].count, 2);
  assert.equal(view.variants[regenerated.assistantMessageId].index, 1);

  const rated = await c.feedback(ticket.assistantMessageId, 'up', 'good start');
  assert.equal(rated.rating, 'UP');
});

test('a dropped connection reconnects from the last seen event', async () => {
  let streamCalls = 0;
  const seenCursors = [];
  // A fetch that cuts the first event stream after a few chunks, as a flaky network would.
  const flakyFetch = async (url, init) => {
    const response = await fetch(url, init);
    if (!String(url).includes('/stream')) return response;
    streamCalls++;
    seenCursors.push(init.headers['Last-Event-ID']);
    if (streamCalls > 1) return response;
    let chunks = 0;
    const reader = response.body.getReader();
    const body = new ReadableStream({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done || ++chunks > 6) {
          reader.cancel().catch(() => {});
          controller.error(new Error('connection reset by peer'));
          return;
        }
        controller.enqueue(value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const c = client('node-alice', { fetch: flakyFetch });
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'slow please' });
  const seqs = [];
  const reducer = new RunReducer();
  const statuses = [];
  const handle = c.stream(ticket.runId, {
    onEvent: (event) => {
      seqs.push(event.seq);
      reducer.apply(event);
    },
    onStatus: (s) => statuses.push(s),
  });
  assert.equal(await handle.done, 'ended');
  assert.ok(streamCalls >= 2, 'the client reconnected');
  assert.ok(statuses.includes('reconnecting'));
  assert.ok(Number(seenCursors[1]) > 0, `the reconnect resumed after seq ${seenCursors[1]}`);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'every seq exactly once, in order');
  const view = await client().getSession(session.id);
  assert.deepEqual(reducer.messages(), runMessages(view, ticket.runId));
});

test('errors carry the server problem', async () => {
  const c = client();
  await assert.rejects(c.getSession('no-such-session'), (e) => e instanceof ParleyError && e.status === 404 && e.code === 'NOT_FOUND');
  const session = await c.createSession();
  await assert.rejects(c.startRun(session.id, { message: '  ' }), (e) => e.status === 400 && e.code === 'INVALID_INPUT');
  const other = client('node-mallory');
  await assert.rejects(other.getSession(session.id), (e) => e.code === 'NOT_FOUND');
  const stream = other.stream('no-such-run', { onEvent: () => {} });
  await assert.rejects(stream.done, (e) => e.code === 'NOT_FOUND');
});

// ---- the client's reconnect loop against fake answers: when to stop, how long to wait, what it leaves behind

const runEvent = (seq, type, extra = {}) => ({ runId: 'run-x', seq, timestamp: 1764450000000 + seq, event: { type, ...extra } });
const sseResponse = (events) => new Response(
  events.map((e) => `id:${e.seq}\nevent:${e.event.type}\ndata:${JSON.stringify(e)}\n\n`).join(''),
  { status: 200, headers: { 'content-type': 'text/event-stream;charset=UTF-8' } });
const jsonResponse = (status, body) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A fetch answering each stream request with the next of `answers` (a Response or a thrown error), counting them. */
function scriptedFetch(answers, { state = () => jsonResponse(200, { run: { status: 'RUNNING' }, lastSeq: 0 }) } = {}) {
  const calls = { stream: 0, state: 0 };
  const fetch = async (url) => {
    if (String(url).includes('/state')) {
      calls.state++;
      return state();
    }
    const answer = answers[Math.min(calls.stream++, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    return typeof answer === 'function' ? answer() : answer.clone();
  };
  return { fetch, calls };
}

/** Streams with a guard: a client still reconnecting after `maxCalls` stream requests is closed, and the test fails. */
async function streamGuarded(c, calls, runId, { after = 0, maxCalls = 5, ...rest } = {}) {
  const events = [];
  const handle = c.stream(runId, { after, onEvent: (e) => events.push(e), ...rest });
  const guard = setInterval(() => {
    if (calls.stream > maxCalls) handle.close();
  }, 5);
  try {
    const outcome = await handle.done;
    return { outcome, events, handle };
  } finally {
    clearInterval(guard);
  }
}

test('a cursor at or past the run\'s end ends the stream at once instead of reconnecting', async () => {
  const c = client('node-at-the-end');
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'hello' });
  const { lastSeq, outcome } = await watchToEnd(c, ticket.runId);
  assert.equal(outcome, 'ended');
  while ((await c.state(ticket.runId)).run.status !== 'SUCCEEDED') await new Promise((r) => setTimeout(r, 10));
  for (const after of [lastSeq, lastSeq + 5]) {
    const calls = { stream: 0, state: 0 };
    const counting = client('node-at-the-end', {
      fetch: async (url, init) => {
        calls[String(url).includes('/state') ? 'state' : 'stream']++;
        return fetch(url, init);
      },
    });
    const statuses = [];
    const result = await streamGuarded(counting, calls, ticket.runId, { after, onStatus: (s) => statuses.push(s) });
    assert.equal(result.outcome, 'ended', `after ${after}`);
    assert.deepEqual(result.events, []);
    assert.deepEqual(calls, { stream: 1, state: 1 }, 'one stream request, one look at the state');
    assert.equal(statuses.at(-1), 'ended');
  }
});

test('a stream that closes before the run\'s end, with the run over and events missed, reconnects for them', async () => {
  const { fetch, calls } = scriptedFetch(
    [sseResponse([runEvent(1, 'run_started')]), sseResponse([runEvent(2, 'run_finished', { status: 'SUCCEEDED' })])],
    { state: () => jsonResponse(200, { run: { status: 'SUCCEEDED' }, lastSeq: 2 }) });
  const c = client('nobody', { fetch, sleep: async () => {} });
  const { outcome, events } = await streamGuarded(c, calls, 'run-x');
  assert.equal(outcome, 'ended');
  assert.deepEqual(events.map((e) => e.seq), [1, 2]);
  assert.equal(calls.stream, 2);
});

test('a login page instead of the event stream stops with an error', async () => {
  const { fetch, calls } = scriptedFetch([
    new Response('<html><body>Please log in</body></html>', { status: 200, headers: { 'content-type': 'text/html' } }),
  ]);
  const statuses = [];
  const c = client('nobody', { fetch, sleep: async () => {} });
  await assert.rejects(streamGuarded(c, calls, 'run-x', { onStatus: (s, d) => statuses.push([s, d]) }),
    (e) => e instanceof ParleyError && e.code === 'UNEXPECTED_RESPONSE' && /text\/html/.test(e.message));
  assert.equal(calls.stream, 1);
  assert.equal(statuses.at(-1)[0], 'closed');
  assert.equal(statuses.at(-1)[1].error.code, 'UNEXPECTED_RESPONSE');
});

test('a 4xx answer stops with an error, with or without a problem body; 408, 429 and 5xx are retried', async () => {
  const answers = [
    [new Response('<h1>Not Found</h1>', { status: 404, headers: { 'content-type': 'text/html' } }), 404, 'HTTP_404'],
    [new Response('Unauthorized', { status: 401, headers: { 'content-type': 'text/plain' } }), 401, 'HTTP_401'],
    [new Response('', { status: 403 }), 403, 'HTTP_403'],
    [jsonResponse(404, { code: 'NOT_FOUND', detail: 'no such run' }), 404, 'NOT_FOUND'],
  ];
  for (const [answer, status, code] of answers) {
    const { fetch, calls } = scriptedFetch([answer]);
    const c = client('nobody', { fetch, sleep: async () => {} });
    await assert.rejects(streamGuarded(c, calls, 'run-x'), (e) => e instanceof ParleyError && e.status === status && e.code === code);
    assert.equal(calls.stream, 1, `${status} is not asked again`);
  }
  const { fetch, calls } = scriptedFetch([
    new Response('slow down', { status: 429 }),
    new Response('timeout', { status: 408 }),
    new Response('<h1>Bad Gateway</h1>', { status: 502, headers: { 'content-type': 'text/html' } }),
    new TypeError('fetch failed'),
    sseResponse([runEvent(1, 'run_finished', { status: 'SUCCEEDED' })]),
  ]);
  const c = client('nobody', { fetch, sleep: async () => {} });
  const { outcome } = await streamGuarded(c, calls, 'run-x');
  assert.equal(outcome, 'ended');
  assert.equal(calls.stream, 5);
});

test('a malformed event stops with an error', async () => {
  const { fetch, calls } = scriptedFetch([
    new Response('data: {not json\n\n', { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  ]);
  const c = client('nobody', { fetch, sleep: async () => {} });
  await assert.rejects(streamGuarded(c, calls, 'run-x'), (e) => e instanceof ParleyError && e.code === 'UNEXPECTED_RESPONSE');
  assert.equal(calls.stream, 1);
});

test('reconnects without progress wait longer each time up to the cap, and progress starts the waits again', async () => {
  const unavailable = new Response('', { status: 503 });
  const { fetch, calls } = scriptedFetch([
    unavailable, unavailable, unavailable, unavailable, unavailable,
    sseResponse([runEvent(1, 'run_started')]),
    unavailable, unavailable,
    sseResponse([runEvent(2, 'run_finished', { status: 'SUCCEEDED' })]),
  ]);
  const waits = [];
  const c = client('nobody', { fetch, reconnectDelays: [10, 20, 40, 80], sleep: async (ms) => { waits.push(ms); } });
  const { outcome, events } = await streamGuarded(c, calls, 'run-x', { maxCalls: 20 });
  assert.equal(outcome, 'ended');
  assert.deepEqual(events.map((e) => e.seq), [1, 2]);
  assert.deepEqual(waits, [10, 20, 40, 80, 80, 10, 10, 20]);
});

test('reconnecting leaves no abort listener behind, on the caller\'s signal or the client\'s own', async () => {
  const signals = new Set();
  const add = AbortSignal.prototype.addEventListener;
  AbortSignal.prototype.addEventListener = function (type, ...rest) {
    if (type === 'abort') signals.add(this);
    return add.call(this, type, ...rest);
  };
  const listeners = () => [...signals].reduce((sum, s) => sum + getEventListeners(s, 'abort').length, 0);
  try {
    const unavailable = new Response('', { status: 503 });
    const seen = [];
    const answers = Array.from({ length: 30 }, () => unavailable);
    answers.push(sseResponse([runEvent(1, 'run_finished', { status: 'SUCCEEDED' })]));
    const { fetch: scripted, calls } = scriptedFetch(answers);
    const fetch = async (url, init) => {
      seen.push(listeners());
      return scripted(url, init);
    };
    const caller = new AbortController();
    const c = client('nobody', { fetch, reconnectDelays: [1] });
    const { outcome } = await streamGuarded(c, calls, 'run-x', { maxCalls: 40, signal: caller.signal });
    assert.equal(outcome, 'ended');
    assert.equal(calls.stream, 31);
    assert.ok(Math.max(...seen) <= 2, `listeners while reconnecting: ${seen}`);
    assert.equal(seen.at(-1), seen[0], `listeners while reconnecting: ${seen}`);
    assert.equal(listeners(), 0, 'none after the end');
    assert.equal(getEventListeners(caller.signal, 'abort').length, 0);

    const closing = client('nobody', { fetch: scriptedFetch([unavailable]).fetch, reconnectDelays: [1] });
    const handle = closing.stream('run-x', { onEvent: () => {}, signal: caller.signal });
    setTimeout(() => caller.abort(), 30);
    assert.equal(await handle.done, 'closed', 'the caller\'s signal closes the stream');
  } finally {
    AbortSignal.prototype.addEventListener = add;
  }
});

test('the host\'s CSRF token goes with every request that changes something', async () => {
  const seen = [];
  const recording = async (url, init) => {
    seen.push({ method: init?.method ?? 'GET', url: String(url), headers: { ...init?.headers } });
    return fetch(url, init);
  };
  const c = client('node-csrf', { fetch: recording, csrf: { headerName: 'X-CSRF-TOKEN', token: 'token-1' } });
  const session = await c.createSession({ title: 'csrf' });
  await c.updateSession(session.id, { title: 'renamed' });
  await c.listSessions();
  const ticket = await c.startRun(session.id, { message: 'hello' });
  assert.equal(await c.stream(ticket.runId, { onEvent: () => {} }).done, 'ended');
  await c.deleteSession((await c.createSession()).id);
  const unsafe = seen.filter((r) => r.method !== 'GET');
  assert.deepEqual(unsafe.map((r) => r.method), ['POST', 'PATCH', 'POST', 'POST', 'DELETE']);
  for (const r of unsafe) assert.equal(r.headers['X-CSRF-TOKEN'], 'token-1', `${r.method} ${r.url}`);
  for (const r of seen.filter((r) => r.method === 'GET')) assert.equal(r.headers['X-CSRF-TOKEN'], undefined);

  // Spring Security's CookieCsrfTokenRepository: the XSRF-TOKEN cookie, read per request, in X-XSRF-TOKEN
  globalThis.document = { cookie: 'theme=dark; XSRF-TOKEN=a%2Fb-1' };
  try {
    seen.length = 0;
    const fromCookie = client('node-csrf', { fetch: recording, csrf: {} });
    await fromCookie.createSession();
    globalThis.document.cookie = 'XSRF-TOKEN=rotated';
    await fromCookie.createSession();
    assert.deepEqual(seen.map((r) => r.headers['X-XSRF-TOKEN']), ['a/b-1', 'rotated']);
  } finally {
    delete globalThis.document;
  }

  seen.length = 0;
  let n = 0;
  const perRequest = new ParleyClient({ baseUrl, fetch: recording, headers: async () => ({ 'X-Parley-Owner': 'node-csrf', 'X-Request': String(++n) }) });
  await perRequest.listSessions();
  await perRequest.listSessions();
  assert.deepEqual(seen.map((r) => r.headers['X-Request']), ['1', '2'], 'a headers function is asked per request');
});

test('follow-up suggestions arrive after the run ends and the session view keeps them', async () => {
  const c = client('node-suggest');
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'suggest slow trip' });
  const handed = [];
  const handle = c.watch(ticket.runId, { onSuggestions: (prompts, answerId) => handed.push({ prompts, answerId }) });
  assert.equal(await handle.done, 'ended');
  const prompts = await handle.suggestions;
  assert.deepEqual(prompts, ['Tell me more', 'What next after suggest slow trip?']);
  assert.deepEqual(handed, [{ prompts, answerId: ticket.assistantMessageId }]);
  const view = await c.getSession(session.id);
  const answer = view.messages.find((m) => m.id === ticket.assistantMessageId);
  assert.deepEqual(answer.suggestions.prompts, prompts, 'a reload shows them');
  assert.deepEqual(await c.suggestions(ticket.assistantMessageId),
    { messageId: ticket.assistantMessageId, prompts, pending: false });
  await assert.rejects(client('node-suggest-mallory').suggestions(ticket.assistantMessageId),
    (e) => e instanceof ParleyError && e.status === 404 && e.code === 'NOT_FOUND');
});

test('no suggestions come for an answer whose provider fails, and the run still succeeds', async () => {
  const c = client('node-suggest-fail');
  const session = await c.createSession();
  const ticket = await c.startRun(session.id, { message: 'suggest broken' });
  let called = false;
  const handle = c.watch(ticket.runId, { onSuggestions: () => { called = true; } });
  assert.equal(await handle.done, 'ended');
  assert.equal(handle.reducer.status, 'SUCCEEDED');
  assert.deepEqual(await handle.suggestions, []);
  assert.equal(called, false);
});
