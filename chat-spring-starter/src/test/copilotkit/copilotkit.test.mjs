// Drives Parley's CopilotKit endpoint with CopilotKit's own client core (@copilotkit/core 1.74.0, what
// @copilotkit/react-core 1.74.0 runs in the browser), headless: no React, no Node runtime in between. Each
// "page" is a fresh CopilotKitCore, so a second one on the same thread is a reload. Run by
// CopilotKitClientNodeTest inside mvn verify.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CopilotKitCore } from '@copilotkit/core';

const runtimeUrl = process.env.PARLEY_COPILOTKIT_URL;
// The core connects to its runtime only in a browser (it looks for `window`): this is a page on the server's origin.
globalThis.window ??= { location: new URL(runtimeUrl) };
const OWNER = 'copilotkit-' + randomUUID();

// Every request the core makes, as "METHOD path", to see which transport it spoke.
const requests = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  requests.push((init?.method ?? (input instanceof Request ? input.method : 'GET')) + ' ' + url.pathname);
  return realFetch(input, init);
};
const base = new URL(runtimeUrl).pathname;

/** A page: a core on the runtime, its agent "default" on the thread, and the errors the core reported. */
async function page(threadId, { owner = OWNER, transport = 'rest', tools = [] } = {}) {
  const errors = [];
  const core = new CopilotKitCore({ runtimeUrl, runtimeTransport: transport, headers: { 'X-Parley-Owner': owner },
    tools });
  core.subscribe({ onError: ({ error, code }) => { errors.push(code + ': ' + error?.message); } });
  const deadline = Date.now() + 10_000;
  while (!core.getAgent('default')) {
    assert.ok(Date.now() < deadline, 'the runtime info lists the agent "default"; errors: ' + errors.join('; '));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const agent = core.getAgent('default');
  agent.threadId = threadId;
  return { core, agent, errors };
}

function say(agent, text, id = randomUUID()) {
  agent.addMessage({ id, role: 'user', content: text });
  return id;
}

/** The conversation: user and assistant messages (reasoning streams live but is not stored as a message). */
function talk(agent) {
  return agent.messages.filter((m) => m.role === 'user' || m.role === 'assistant');
}

function roles(agent) {
  return talk(agent).map((m) => m.role);
}

/** Records every event the agent applies, for the checks that look at what arrived. */
function record(agent) {
  const events = [];
  agent.subscribe({ onEvent: ({ event }) => { events.push(event); } });
  return events;
}

async function waitFor(check, what) {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    assert.ok(Date.now() < deadline, 'timed out waiting for ' + what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const transport of ['rest', 'single', 'auto']) {
  test(`${transport}: two turns, a reload brings the thread back under its ids, and the next turn continues it`, async () => {
    requests.length = 0;
    const threadId = randomUUID();
    const first = await page(threadId, { transport });
    const u1 = say(first.agent, 'hello');
    await first.core.runAgent({ agent: first.agent });
    const u2 = say(first.agent, 'hello again');
    await first.core.runAgent({ agent: first.agent });
    assert.deepEqual(roles(first.agent), ['user', 'assistant', 'user', 'assistant']);
    assert.deepEqual(first.errors, []);

    const reloaded = await page(threadId, { transport });
    await reloaded.core.connectAgent({ agent: reloaded.agent });
    assert.deepEqual(talk(reloaded.agent).map((m) => m.id), talk(first.agent).map((m) => m.id));
    assert.equal(talk(reloaded.agent)[1].content, 'Hello from the scripted runtime.');
    assert.equal(talk(reloaded.agent)[0].id, u1);
    assert.equal(talk(reloaded.agent)[2].id, u2);

    say(reloaded.agent, 'and once more');
    await reloaded.core.runAgent({ agent: reloaded.agent });
    assert.deepEqual(roles(reloaded.agent), ['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    assert.equal(talk(reloaded.agent)[5].content, 'Hello from the scripted runtime.');
    assert.deepEqual(reloaded.errors, []);
    if (transport === 'single') {
      assert.deepEqual([...new Set(requests)], ['POST ' + base], 'the single route only');
    } else {
      for (const route of ['GET ' + base + '/info', 'POST ' + base + '/agent/default/run',
        'POST ' + base + '/agent/default/connect']) {
        assert.ok(requests.includes(route), route + ' in ' + requests.join(', '));
      }
    }
  });
}

test('a page on a thread it does not own, or that does not exist, connects to nothing', async () => {
  const threadId = randomUUID();
  const mine = await page(threadId);
  say(mine.agent, 'hello');
  await mine.core.runAgent({ agent: mine.agent });

  const other = await page(threadId, { owner: 'someone-else-' + randomUUID() });
  await other.core.connectAgent({ agent: other.agent });
  assert.deepEqual(other.agent.messages, []);
  const nowhere = await page(randomUUID());
  await nowhere.core.connectAgent({ agent: nowhere.agent });
  assert.deepEqual(nowhere.agent.messages, []);
});

test('a reload mid-answer shows the answer once, followed to its end', async () => {
  const threadId = randomUUID();
  const first = await page(threadId);
  say(first.agent, 'slow please');
  const events = record(first.agent);
  const running = first.core.runAgent({ agent: first.agent });
  await waitFor(() => events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'), 'the first words of the answer');

  const reloaded = await page(threadId);
  await reloaded.core.connectAgent({ agent: reloaded.agent });
  const expected = Array.from({ length: 40 }, (_, i) => 's' + i + ' ').join('');
  assert.deepEqual(roles(reloaded.agent), ['user', 'assistant']);
  assert.equal(talk(reloaded.agent)[1].content, expected);
  await running;
  assert.equal(talk(first.agent)[1].content, expected);
  assert.equal(talk(first.agent)[1].id, talk(reloaded.agent)[1].id);
});

test('stop ends the run with its partial answer kept, and the server closes the run', async () => {
  const threadId = randomUUID();
  const first = await page(threadId);
  say(first.agent, 'wait for me');
  const events = record(first.agent);
  const running = first.core.runAgent({ agent: first.agent });
  await waitFor(() => events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'), 'the first words of the answer');
  requests.length = 0;
  first.core.stopAgent({ agent: first.agent });
  await running;
  assert.ok(requests.includes('POST ' + base + '/agent/default/stop/' + threadId), requests.join(', '));
  assert.equal(events.at(-1).type, 'RUN_FINISHED', 'the server ended the run stream: ' + events.map((e) => e.type));
  assert.equal(talk(first.agent).at(-1).content, 'Partial answer');

  const reloaded = await page(threadId);
  await reloaded.core.connectAgent({ agent: reloaded.agent });
  assert.deepEqual(roles(reloaded.agent), ['user', 'assistant']);
  assert.equal(talk(reloaded.agent)[1].content, 'Partial answer');
});

test('a question pending when the page reloads comes back as an interrupt, and resume answers it', async () => {
  const threadId = randomUUID();
  const first = await page(threadId);
  say(first.agent, 'clarify the city');
  await first.core.runAgent({ agent: first.agent });

  const reloaded = await page(threadId);
  const events = record(reloaded.agent);
  await reloaded.core.connectAgent({ agent: reloaded.agent });
  const finished = events.filter((e) => e.type === 'RUN_FINISHED').at(-1);
  assert.equal(finished.outcome.type, 'interrupt');
  const [question] = finished.outcome.interrupts;
  assert.equal(question.message, 'Which city?');

  await reloaded.core.runAgent({ agent: reloaded.agent,
    resume: [{ interruptId: question.id, status: 'resolved', payload: 'Rome' }] });
  assert.equal(talk(reloaded.agent).at(-1).role, 'assistant');
  assert.equal(talk(reloaded.agent).at(-1).content, 'You chose Rome.');
  assert.deepEqual(reloaded.errors, []);
});

test('a tool the page runs (a frontend tool): the core runs it and the run goes on with its result', async () => {
  const threadId = randomUUID();
  const calls = [];
  const tools = [{ name: 'get_local_time', description: "The person's local time",
    handler: async (args) => { calls.push(args); return 'noon'; } }];
  const first = await page(threadId, { tools });
  say(first.agent, 'client tool get_local_time');
  await first.core.runAgent({ agent: first.agent });
  await waitFor(() => talk(first.agent).at(-1)?.content === 'The page said: noon', 'the answer after the tool');
  assert.deepEqual(calls, [{ zone: 'local' }]);
  assert.deepEqual(first.errors, []);

  const reloaded = await page(threadId, { tools });
  await reloaded.core.connectAgent({ agent: reloaded.agent });
  assert.equal(talk(reloaded.agent).at(-1).content, 'The page said: noon');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(calls.length, 1, 'a reload does not run the tool again');
});
