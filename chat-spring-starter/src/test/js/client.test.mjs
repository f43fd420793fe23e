// The browser client against a live Parley server (started by BrowserClientNodeTest; node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
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
      const [pending] = reducer.pendingClarifies();
      if (pending && !answered) {
        answered = true;
        assert.deepEqual(pending.choices, ['Paris', 'Rome']);
        c.answer(ticket.runId, pending.clarifyId, 'Rome').catch((e) => assert.fail(e));
      }
    },
  });
  assert.equal(await handle.done, 'ended');
  assert.equal(handle.reducer.message(ticket.assistantMessageId).text, 'You chose Rome.');
  const again = await c.answer(ticket.runId, 'ask-1', 'Rome');
  assert.equal(again.replayed, true);
  await assert.rejects(c.answer(ticket.runId, 'ask-1', 'Paris'), (e) => e instanceof ParleyError && e.code === 'CONFLICT');
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
