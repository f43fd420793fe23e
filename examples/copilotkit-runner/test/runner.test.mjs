// ParleyAgentRunner inside the real CopilotKit runtime (@copilotkit/runtime 1.75.0), each runtime its own Node
// process on loopback (test/runtime-server.mjs), so that killing one is a real restart; the "pages" are CopilotKit's
// own client core (@copilotkit/core 1.74.0, what @copilotkit/react-core 1.74.0 runs in the browser), headless.
// PARLEY_URL is a Parley host's base path (…/api/chat), the owner taken from X-Parley-Owner (trusted there, as
// behind a proxy). Run by ParleyAgentRunnerNodeTest inside mvn verify.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { CopilotKitCore } from '@copilotkit/core';
import { ParleyAgentRunner, ParleyRunnerError } from '../index.js';

const PARLEY = process.env.PARLEY_URL;
assert.ok(PARLEY, 'PARLEY_URL names the Parley host, e.g. http://localhost:8080/api/chat');
const OWNER = 'runner-' + randomUUID();
// The core connects to its runtime only in a browser (it looks for `window`).
globalThis.window ??= { location: new URL('http://127.0.0.1/') };

// Every request a page makes, as "METHOD path".
const requests = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  requests.push((init?.method ?? (input instanceof Request ? input.method : 'GET')) + ' ' + url.pathname);
  return realFetch(input, init);
};

const runtimes = new Set();
after(() => { for (const runtime of runtimes) runtime.kill(); });

/**
 * A CopilotKit runtime in its own process: `runner` "parley" (ParleyAgentRunner) or "memory" (the stock in-memory
 * runner with an HttpAgent onto Parley).
 */
async function startRuntime({ runner = 'parley', parley = PARLEY } = {}) {
  const child = spawn(process.execPath, [new URL('./runtime-server.mjs', import.meta.url).pathname], {
    env: { ...process.env, PARLEY_URL: parley, RUNNER: runner, COPILOTKIT_TELEMETRY_DISABLED: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk) => { output += chunk; });
  const port = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const found = /listening (\d+)/.exec(output);
      if (found) resolve(Number(found[1]));
    });
    child.on('exit', (code) => reject(new Error('the runtime exited (' + code + '): ' + output)));
  });
  const runtime = {
    url: `http://127.0.0.1:${port}/api/copilotkit`,
    output: () => output,
    kill: () => child.kill('SIGKILL'),
    /** Kills the process and waits for it to be gone: what a crash or a redeploy does to the in-memory state. */
    async crash() {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
      runtimes.delete(runtime);
    },
  };
  runtimes.add(runtime);
  return runtime;
}

/** A page on a runtime: a core, its agent "default" on the thread, and the errors the core reported. */
async function page(runtime, threadId, { owner = OWNER } = {}) {
  const errors = [];
  const core = new CopilotKitCore({ runtimeUrl: runtime.url, runtimeTransport: 'rest',
    headers: owner ? { 'X-Parley-Owner': owner } : {} });
  core.subscribe({ onError: ({ error, code }) => { errors.push(code + ': ' + error?.message); } });
  const deadline = Date.now() + 15_000;
  while (!core.getAgent('default')) {
    assert.ok(Date.now() < deadline, 'the runtime info lists the agent "default"; errors: ' + errors.join('; '));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const agent = core.getAgent('default');
  agent.threadId = threadId;
  return { core, agent, errors };
}

function say(agent, text) {
  const id = randomUUID();
  agent.addMessage({ id, role: 'user', content: text });
  return id;
}

/** The conversation: user and assistant messages. */
function talk(agent) {
  return agent.messages.filter((m) => m.role === 'user' || m.role === 'assistant');
}

/** Every event the agent applies, from now on. */
function record(agent) {
  const events = [];
  agent.subscribe({ onEvent: ({ event }) => { events.push(event); } });
  return events;
}

/**
 * A page on a new thread of `runtime` that sent `text` and sees the first words of the answer: the thread, the
 * page, the events it received, and the run's promise.
 */
async function answering(runtime, text) {
  const threadId = randomUUID();
  const p1 = await page(runtime, threadId);
  say(p1.agent, text);
  const events = record(p1.agent);
  const running = p1.core.runAgent({ agent: p1.agent });
  await waitFor(() => events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'), 'the first words of the answer');
  return { threadId, p1, events, running };
}

async function waitFor(check, what, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, 'timed out waiting for ' + what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The thread as Parley's own REST API shows it: its active branch's user and assistant messages. */
async function parleyThread(threadId, owner = OWNER) {
  const response = await realFetch(`${PARLEY}/sessions/${threadId}`, { headers: { 'X-Parley-Owner': owner } });
  assert.equal(response.status, 200, await response.clone().text());
  const view = await response.json();
  return { view, talk: view.messages.filter((m) => m.type === 'user' || m.type === 'assistant') };
}

const shared = Promise.all([startRuntime(), startRuntime()]);

test('two turns through the runtime, then a new runtime process brings the thread back and the next turn has '
  + 'its history', async () => {
  const threadId = randomUUID();
  const first = await startRuntime();
  const p1 = await page(first, threadId);
  const u1 = say(p1.agent, 'hello');
  await p1.core.runAgent({ agent: p1.agent });
  const u2 = say(p1.agent, 'hello again');
  await p1.core.runAgent({ agent: p1.agent });
  assert.deepEqual(p1.errors, []);
  assert.deepEqual(talk(p1.agent).map((m) => [m.role, m.content]), [['user', 'hello'],
    ['assistant', 'Hello from Parley.'], ['user', 'hello again'], ['assistant', 'Hello from Parley.']]);
  // stored by Parley, the page's message ids kept as the client's
  const stored = await parleyThread(threadId);
  assert.deepEqual(stored.talk.map((m) => m.text), ['hello', 'Hello from Parley.', 'hello again', 'Hello from Parley.']);
  assert.deepEqual(stored.talk.filter((m) => m.type === 'user').map((m) => m.clientMessageId), [u1, u2]);

  await first.crash();
  const second = await startRuntime();
  const p2 = await page(second, threadId);
  await p2.core.connectAgent({ agent: p2.agent });
  assert.deepEqual(p2.errors, []);
  assert.deepEqual(talk(p2.agent).map((m) => [m.id, m.role, m.content]),
    talk(p1.agent).map((m) => [m.id, m.role, m.content]), 'the thread under the ids the first page had');

  say(p2.agent, 'recall');
  await p2.core.runAgent({ agent: p2.agent });
  assert.deepEqual(p2.errors, []);
  assert.equal(talk(p2.agent).length, 6);
  assert.equal(talk(p2.agent).at(-1).content, 'Earlier: hello | hello again', 'the agent had the history');
  const after = await parleyThread(threadId);
  assert.deepEqual(after.talk.map((m) => m.text), ['hello', 'Hello from Parley.', 'hello again', 'Hello from Parley.',
    'recall', 'Earlier: hello | hello again'], 'one branch: the turn was appended, not an edit');
  assert.ok(Object.values(after.view.branches).every((b) => b.count === 1), JSON.stringify(after.view.branches));
});

test('the comparison: the stock runtime (in-memory runner) comes back from the same restart with an empty thread',
  async () => {
    const threadId = randomUUID();
    const first = await startRuntime({ runner: 'memory' });
    const p1 = await page(first, threadId);
    say(p1.agent, 'hello');
    await p1.core.runAgent({ agent: p1.agent });
    assert.equal(talk(p1.agent).at(-1).content, 'Hello from Parley.');
    const sameProcess = await page(first, threadId);
    await sameProcess.core.connectAgent({ agent: sameProcess.agent });
    assert.equal(talk(sameProcess.agent).length, 2, 'before the restart the stock runtime has it');

    await first.crash();
    const second = await startRuntime({ runner: 'memory' });
    const p2 = await page(second, threadId);
    await p2.core.connectAgent({ agent: p2.agent });
    assert.deepEqual(talk(p2.agent), [], 'after it, nothing: what ParleyAgentRunner is for');
    assert.equal((await parleyThread(threadId)).talk.length, 2, 'while Parley has the thread');
  });

test('a second runtime re-joins a run mid-answer and gets the answer once, to its end', async () => {
  const [one, two] = await shared;
  const { threadId, p1, events, running } = await answering(one, 'slow please');

  const p2 = await page(two, threadId);
  const rejoined = record(p2.agent);
  await p2.core.connectAgent({ agent: p2.agent });
  const expected = Array.from({ length: 60 }, (_, i) => 's' + i + ' ').join('');
  assert.deepEqual(talk(p2.agent).map((m) => m.role), ['user', 'assistant']);
  assert.equal(talk(p2.agent)[1].content, expected, 'the whole answer, once');
  assert.ok(rejoined.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').length > 1, 'followed live, not one snapshot');
  assert.equal(rejoined.at(-1).type, 'RUN_FINISHED');
  await running;
  assert.equal(talk(p1.agent)[1].content, expected);
  assert.equal(talk(p1.agent)[1].id, talk(p2.agent)[1].id);
  assert.deepEqual([...p1.errors, ...p2.errors], []);
});

test('stop through the runtime ends the run with its partial answer kept', async () => {
  const [one, two] = await shared;
  const { threadId, p1, events, running } = await answering(one, 'wait for me');
  requests.length = 0;
  p1.core.stopAgent({ agent: p1.agent });
  await running;
  assert.ok(requests.includes(`POST /api/copilotkit/agent/default/stop/${threadId}`), requests.join(', '));
  assert.equal(events.at(-1).type, 'RUN_FINISHED', events.map((e) => e.type).join(', '));
  assert.equal(talk(p1.agent).at(-1).content, 'Partial answer');

  const p2 = await page(two, threadId);
  await p2.core.connectAgent({ agent: p2.agent });
  assert.deepEqual(talk(p2.agent).map((m) => [m.role, m.content]), [['user', 'wait for me'],
    ['assistant', 'Partial answer']]);
  const stored = await parleyThread(threadId);
  assert.equal(stored.talk.at(-1).text, 'Partial answer');
  assert.equal(stored.talk.at(-1).status, 'CANCELLED');
});

test('a stop through another runtime reaches the run, for its owner only', async () => {
  const [one, two] = await shared;
  const { threadId, p1, events, running } = await answering(one, 'wait for me');

  // the stop request as a page sends it, to the other runtime, which never saw the thread
  const stop = (owner) => realFetch(`${two.url}/agent/default/stop/${threadId}`, { method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Parley-Owner': owner }, body: '{}' })
    .then(async (r) => ({ status: r.status, body: await r.json() }));
  const stranger = await stop('someone-else-' + randomUUID());
  assert.deepEqual(stranger, { status: 200, body: { stopped: false, message: `No active run for thread '${threadId}'.` } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.ok(!events.some((e) => e.type === 'RUN_FINISHED'), 'a stranger\'s stop stopped nothing');

  // at the same moment, each stop acts for its own sender
  const [again, owners] = await Promise.all([stop('someone-else-' + randomUUID()), stop(OWNER)]);
  assert.equal(again.body.stopped, false);
  assert.equal(owners.status, 200);
  assert.equal(owners.body.stopped, true);
  await running;
  assert.equal(events.at(-1).type, 'RUN_FINISHED');
  assert.equal(talk(p1.agent).at(-1).content, 'Partial answer');
});

test('another owner\'s thread, and an unknown one, connect empty through the runtime', async () => {
  const [one, two] = await shared;
  const threadId = randomUUID();
  const mine = await page(one, threadId);
  say(mine.agent, 'hello');
  await mine.core.runAgent({ agent: mine.agent });
  assert.equal(talk(mine.agent).length, 2);

  const other = await page(two, threadId, { owner: 'someone-else-' + randomUUID() });
  const seen = record(other.agent);
  await other.core.connectAgent({ agent: other.agent });
  assert.deepEqual(other.agent.messages, []);
  assert.deepEqual(seen, []);
  assert.deepEqual(other.errors, []);
  const nowhere = await page(two, randomUUID());
  await nowhere.core.connectAgent({ agent: nowhere.agent });
  assert.deepEqual(nowhere.agent.messages, []);
  // and the other owner's turn on that thread id is refused by Parley, with the owner's thread untouched
  say(other.agent, 'mine now');
  await other.core.runAgent({ agent: other.agent }).catch(() => {});
  assert.ok(other.errors.some((e) => /Parley answered 404/.test(e)), other.errors.join('; '));
  assert.equal((await parleyThread(threadId)).talk.length, 2);
});

test('Parley refusing a caller, or down, is a clear error on the page, never an empty success', async () => {
  const [one] = await shared;
  const anonymous = await page(one, randomUUID(), { owner: null });
  say(anonymous.agent, 'hello');
  await anonymous.core.runAgent({ agent: anonymous.agent }).catch(() => {});
  assert.ok(anonymous.errors.some((e) => /Parley answered 401 to POST .*\/agent\/default\/run: Unauthenticated/.test(e)),
    anonymous.errors.join('; '));

  // a port nothing listens on
  const server = (await import('node:net')).createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const deadPort = server.address().port;
  await new Promise((resolve) => server.close(resolve));
  const orphan = await startRuntime({ parley: `http://127.0.0.1:${deadPort}/api/chat` });
  const p = await page(orphan, randomUUID());
  say(p.agent, 'hello');
  await p.core.runAgent({ agent: p.agent }).catch(() => {});
  assert.ok(p.errors.some((e) => /Parley cannot be reached at http:\/\/127\.0\.0\.1:\d+\/api\/chat\/copilotkit\/agent\/default\/run/
    .test(e)), p.errors.join('; '));
  const reload = await page(orphan, randomUUID());
  await reload.core.connectAgent({ agent: reload.agent }).catch(() => {});
  assert.ok(reload.errors.some((e) => /Parley cannot be reached/.test(e)), reload.errors.join('; '));
  const stopped = await realFetch(`${orphan.url}/agent/default/stop/${randomUUID()}`, { method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Parley-Owner': OWNER }, body: '{}' });
  assert.equal(stopped.status, 500, 'the runtime answers a stop that failed with 500');
  assert.match((await stopped.json()).message, /Parley cannot be reached/);
});

test('the runner itself: isRunning while it relays a run, stop\'s answer, errors as ParleyRunnerError', async () => {
  const runner = new ParleyAgentRunner({ url: PARLEY + '/copilotkit' });
  const threadId = randomUUID();
  const input = { threadId, runId: randomUUID(), tools: [], context: [], state: {}, forwardedProps: {},
    messages: [{ id: randomUUID(), role: 'user', content: 'wait for me' }] };
  const events = [];
  const done = new Promise((resolve, reject) => {
    runner.run({ threadId, input, agent: { headers: { 'X-Parley-Owner': OWNER } } })
      .subscribe({ next: (e) => events.push(e), complete: resolve, error: reject });
  });
  assert.equal(await runner.isRunning({ threadId }), false, 'not before Parley started it');
  await waitFor(() => events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'), 'the first words');
  assert.equal(await runner.isRunning({ threadId }), true);
  assert.equal(await runner.stop({ threadId, runId: input.runId }), true);
  await done;
  assert.equal(events.at(-1).type, 'RUN_FINISHED');
  assert.equal(await runner.isRunning({ threadId }), false);
  assert.equal(await runner.stop({ threadId }), false, 'nothing left to stop');

  const down = new ParleyAgentRunner({ url: 'http://127.0.0.1:1/api/chat/copilotkit' });
  await assert.rejects(down.stop({ threadId }), (error) => error instanceof ParleyRunnerError
    && error.status === undefined && /cannot be reached/.test(error.message));
  const refusing = new ParleyAgentRunner({ url: PARLEY + '/copilotkit', agentId: 'nobody',
    headers: { 'X-Parley-Owner': OWNER } });
  await assert.rejects(refusing.stop({ threadId }), (error) => error instanceof ParleyRunnerError
    && error.status === 404 && /Agent not found/.test(error.message) && /"code":"NOT_FOUND"/.test(error.body));
});

/** A fetch that answers every call with `answer()` and keeps each call's URL and headers (lowercased names). */
function recordingFetch(answer = () => Response.json({ stopped: true })) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url: String(url), headers: Object.fromEntries(Object.entries(init?.headers ?? {})
      .map(([name, value]) => [name.toLowerCase(), value])) });
    return answer(url, init);
  };
  return { fetch, calls };
}

test('the stop request\'s headers go to Parley by the runtime\'s own forwardHeaders policy, as run and connect do',
  async () => {
    // the runtime's own resolver (its header-utils, not exported: by path), as `new CopilotRuntime` calls it
    const { resolveForwardHeadersPolicy } = await import(new URL(
      '../node_modules/@copilotkit/runtime/dist/v2/runtime/handlers/header-utils.mjs', import.meta.url));
    const request = () => new Request('http://runtime.test/api/copilotkit/agent/default/stop/t', { method: 'POST',
      headers: { authorization: 'Bearer page', 'x-parley-owner': OWNER, 'x-secret': 's', 'x-internal-trace': 'i',
        'x-forwarded-for': '10.0.0.1', 'x-amz-cf-id': 'cf', 'x-copilotcloud-public-api-key': 'k', cookie: 'c=1' } });
    const stopHeaders = async (forwardHeaders) => {
      const { fetch, calls } = recordingFetch();
      const runner = new ParleyAgentRunner({ url: 'http://parley.test/api/chat/copilotkit', fetch });
      const runtime = { agents: { default: runner.agent() },
        forwardHeadersPolicy: resolveForwardHeadersPolicy(forwardHeaders) };
      const threadId = randomUUID();
      runner.hooks.onBeforeHandler({ request: request(), runtime, route: { method: 'agent/stop', threadId } });
      assert.equal(await runner.stop({ threadId }), true);
      const { 'content-type': _json, ...sent } = calls[0].headers;
      return sent;
    };
    assert.deepEqual(await stopHeaders(undefined), { authorization: 'Bearer page', 'x-parley-owner': OWNER,
      'x-secret': 's', 'x-internal-trace': 'i' }, 'the runtime\'s built-in denylist');
    assert.deepEqual(await stopHeaders({ deny: ['X-Secret'], denyPrefixes: ['x-internal-'] }),
      { authorization: 'Bearer page', 'x-parley-owner': OWNER }, 'deny and denyPrefixes');
    assert.deepEqual(await stopHeaders({ allow: ['x-parley-owner', 'x-forwarded-for'] }),
      { 'x-parley-owner': OWNER, 'x-forwarded-for': '10.0.0.1' }, 'allow: those only, the default denylist off');
  });

test('without hooks, a stranger\'s refused input on the thread does not make them the caller a stop acts for',
  async () => {
    const runner = new ParleyAgentRunner({ url: PARLEY + '/copilotkit' });
    const threadId = randomUUID();
    const base = { threadId, tools: [], context: [], state: {}, forwardedProps: {} };
    const collect = (headers, input) => new Promise((resolve, reject) => {
      const events = [];
      runner.run({ threadId, input, agent: { headers } })
        .subscribe({ next: (e) => events.push(e), complete: () => resolve(events), error: reject });
      collect.last = events;
    });
    const owners = collect({ 'X-Parley-Owner': OWNER }, { ...base, runId: randomUUID(),
      messages: [{ id: randomUUID(), role: 'user', content: 'wait for me' }] });
    const ownerEvents = collect.last;
    await waitFor(() => ownerEvents.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'), 'the first words');
    // earlier messages the thread does not have: Parley answers 200 and one RUN_ERROR (HISTORY_MISMATCH)
    const strangers = await collect({ 'X-Parley-Owner': 'someone-else-' + randomUUID() }, { ...base,
      runId: randomUUID(), messages: [{ id: randomUUID(), role: 'user', content: 'other' },
        { id: randomUUID(), role: 'user', content: 'mine now' }] });
    assert.deepEqual(strangers.map((e) => e.type), ['RUN_ERROR'], JSON.stringify(strangers));
    assert.equal(await runner.stop({ threadId }), true, 'the stop acts for the owner, whose run it stops');
    assert.equal((await owners).at(-1).type, 'RUN_FINISHED');
  });

test('one end per run: none added after Parley\'s own, one RUN_ERROR when the stream ends mid-run', async () => {
  const sse = (events, { fail } = {}) => () => {
    const queue = [...events];
    return new Response(new ReadableStream({
      pull(controller) {
        if (queue.length) controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(queue.shift())}\n\n`));
        else if (fail) controller.error(new Error('connection reset'));
        else controller.close();
      },
    }), { headers: { 'content-type': 'text/event-stream' } });
  };
  const types = (answer) => new Promise((resolve, reject) => {
    const events = [];
    new ParleyAgentRunner({ url: 'http://parley.test/api/chat/copilotkit', fetch: recordingFetch(answer).fetch })
      .run({ threadId: 't', input: { threadId: 't', runId: 'r', messages: [] }, agent: { headers: {} } })
      .subscribe({ next: (e) => events.push(e), complete: () => resolve(events), error: reject });
  });
  const started = { type: 'RUN_STARTED', threadId: 't', runId: 'r' };
  assert.deepEqual((await types(sse([started, { type: 'RUN_FINISHED' }], { fail: true }))).map((e) => e.type),
    ['RUN_STARTED', 'RUN_FINISHED'], 'a reset after RUN_FINISHED');
  const ended = await types(sse([started]));
  assert.deepEqual(ended.map((e) => e.type), ['RUN_STARTED', 'RUN_ERROR']);
  assert.equal(ended[1].code, 'PARLEY_STREAM_ENDED');
  assert.match(ended[1].message, /ended before the run did/);
  assert.deepEqual((await types(sse([started], { fail: true }))).map((e) => e.type), ['RUN_STARTED', 'RUN_ERROR']);
});

test('with the hooks installed, a stop they did not see is refused clearly, never sent without its caller', async () => {
  const sent = [];
  const runner = new ParleyAgentRunner({ url: 'http://parley.invalid/api/chat/copilotkit',
    fetch: async (url, init) => { sent.push(url); return new Response('{"stopped":true}', { status: 200 }); } });
  const request = new Request('http://runtime.invalid/api/copilotkit/info');
  runner.hooks.onBeforeHandler({ request, route: { method: 'info' } });
  // a host's async hook that awaited before calling the runner's: the stop runs outside the marked context
  await new Promise((resolve) => setTimeout(resolve, 1));
  await assert.rejects(runner.stop({ threadId: 't-1', runId: 'r-1' }), (error) => error instanceof ParleyRunnerError
    && /not seen by runner\.hooks/.test(error.message));
  assert.deepEqual(sent, [], 'nothing reached Parley');
});
