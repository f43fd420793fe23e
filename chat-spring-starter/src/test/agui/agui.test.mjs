// Drives Parley's AG-UI endpoint with an official @ag-ui/client (the package named by AGUI_CLIENT), through
// the client's own event verifier and message handling. Run by AgUiClientsNodeTest inside mvn verify.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

const pkg = process.env.AGUI_CLIENT;
const endpoint = process.env.PARLEY_AGUI_URL;
const base = process.env.PARLEY_BASE_URL;
const { HttpAgent } = await import(pkg);

const OWNER = 'agui-' + randomUUID();

function agent(owner = OWNER, threadId = randomUUID()) {
  return new HttpAgent({ url: endpoint, threadId, headers: { 'X-Parley-Owner': owner } });
}

/** Runs the agent and records every event it applied; fails the test on a run error. */
async function run(a, params = {}) {
  const events = [];
  const result = await a.runAgent(params, {
    onEvent: ({ event }) => { events.push(event); },
  });
  return { events, result };
}

function say(a, text, id = randomUUID()) {
  a.addMessage({ id, role: 'user', content: text });
  return id;
}

/** Every START of the response is closed before its final event, and no id is started twice. */
function assertWellFormed(events, threadId, runId) {
  assert.equal(events[0].type, 'RUN_STARTED');
  assert.equal(events[0].threadId, threadId);
  assert.equal(events[0].runId, runId);
  const last = events[events.length - 1];
  assert.ok(['RUN_FINISHED', 'RUN_ERROR'].includes(last.type), 'ends with RUN_FINISHED or RUN_ERROR: ' + last.type);
  const open = new Set();
  const started = new Set();
  for (const e of events) {
    const id = e.messageId ?? e.toolCallId;
    const kind = e.type.startsWith('TOOL_CALL') ? 'tool' : e.type.startsWith('REASONING') ? 'reasoning' : 'text';
    if (['TEXT_MESSAGE_START', 'TOOL_CALL_START', 'REASONING_MESSAGE_START'].includes(e.type)) {
      assert.ok(!started.has(kind + id), 'no id started twice: ' + id);
      started.add(kind + id);
      open.add(kind + id);
    }
    if (['TEXT_MESSAGE_END', 'TOOL_CALL_END', 'REASONING_MESSAGE_END'].includes(e.type)) {
      assert.ok(open.delete(kind + id), e.type + ' closes an open ' + id);
    }
  }
  assert.deepEqual([...open], [], 'every START is closed');
}

async function parley(path, owner = OWNER) {
  const response = await fetch(base + path, { headers: { 'X-Parley-Owner': owner } });
  assert.equal(response.status, 200, path);
  return response.json();
}

function types(events) {
  return events.map((e) => e.type);
}

test('a plain answer: text, reasoning and usage, the client keeping its own message id', async () => {
  const a = agent();
  const userId = say(a, 'hello');
  const { events } = await run(a, { runId: 'run-plain' });
  assertWellFormed(events, a.threadId, 'run-plain');
  const seen = types(events);
  for (const t of ['MESSAGES_SNAPSHOT', 'REASONING_START', 'REASONING_MESSAGE_CONTENT', 'REASONING_END',
    'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']) {
    assert.ok(seen.includes(t), 'sends ' + t + ' in ' + seen.join(','));
  }
  const finished = events.at(-1);
  assert.equal(finished.usage[0].totalTokens, 19);
  assert.equal(finished.outcome, undefined);
  const users = a.messages.filter((m) => m.role === 'user');
  assert.deepEqual(users.map((m) => m.id), [userId]);
  const answer = a.messages.find((m) => m.role === 'assistant');
  assert.equal(answer.content, 'Hello from the scripted runtime.');
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  assert.equal(thread.thread.id, a.threadId);
  const stored = thread.messages.filter((m) => m.type === 'user');
  assert.equal(stored.length, 1);
  assert.equal(stored[0].clientMessageId, userId);
});

test('two turns share the thread and no message is stored or shown twice', async () => {
  const a = agent();
  const first = say(a, 'hello');
  await run(a);
  const second = say(a, 'hello again');
  const { events } = await run(a);
  assertWellFormed(events, a.threadId, events[0].runId);
  const ids = a.messages.map((m) => m.id);
  assert.equal(new Set(ids).size, ids.length, 'no duplicate ids: ' + ids);
  assert.deepEqual(a.messages.filter((m) => m.role === 'user').map((m) => m.id), [first, second]);
  assert.equal(a.messages.filter((m) => m.role === 'assistant').length, 2);
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  assert.equal(thread.messages.filter((m) => m.type === 'user').length, 2);
  assert.equal(thread.messages.filter((m) => m.type === 'assistant').length, 2);
});

test('a retried input (the same runId and message) starts no second run', async () => {
  const a = agent();
  say(a, 'hello');
  const input = { runId: 'retry-' + randomUUID() };
  await run(a, input);
  const again = agent(OWNER, a.threadId);
  a.messages.filter((m) => m.role === 'user').forEach((m) => again.addMessage(m));
  const { events } = await run(again, input);
  assertWellFormed(events, a.threadId, input.runId);
  assert.equal(again.messages.filter((m) => m.role === 'assistant').at(-1).content, 'Hello from the scripted runtime.');
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  assert.equal(thread.messages.filter((m) => m.type === 'assistant').length, 1);
});

test('a second client re-joins a run still working: the same input gets a snapshot and the whole run', async () => {
  const a = agent();
  const userId = say(a, 'go slow');
  const runId = 'rejoin-' + randomUUID();
  const first = run(a, { runId });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const b = agent(OWNER, a.threadId);
  b.addMessage({ id: userId, role: 'user', content: 'go slow' });
  const second = await run(b, { runId });
  const firstDone = await first;
  assertWellFormed(second.events, a.threadId, runId);
  assertWellFormed(firstDone.events, a.threadId, runId);
  const whole = Array.from({ length: 40 }, (_, i) => 's' + i + ' ').join('');
  assert.equal(b.messages.find((m) => m.role === 'assistant').content, whole);
  assert.equal(a.messages.find((m) => m.role === 'assistant').content, whole);
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  assert.equal(thread.messages.filter((m) => m.type === 'assistant').length, 1, 'one run for both');
});

test('a tool call with its result, and the todo list as state', async () => {
  const a = agent();
  say(a, 'use tools');
  const { events } = await run(a);
  assertWellFormed(events, a.threadId, events[0].runId);
  const seen = types(events);
  const start = seen.indexOf('TOOL_CALL_START');
  assert.ok(start >= 0 && seen.indexOf('TOOL_CALL_ARGS') > start && seen.indexOf('TOOL_CALL_END') > start
    && seen.indexOf('TOOL_CALL_RESULT') > seen.indexOf('TOOL_CALL_END'), seen.join(','));
  assert.ok(seen.includes('STATE_SNAPSHOT') && seen.includes('STATE_DELTA'), seen.join(','));
  const call = a.messages.find((m) => m.role === 'assistant' && m.toolCalls?.length);
  assert.equal(call.toolCalls[0].function.name, 'web_search');
  assert.equal(call.toolCalls[0].function.arguments, '{"q":"weather"}');
  const result = a.messages.find((m) => m.role === 'tool');
  assert.equal(result.toolCallId, call.toolCalls[0].id);
  assert.equal(result.content, 'sunny, 21°C');
  assert.deepEqual(a.state.todos.map((t) => [t.content, String(t.status).toLowerCase()]),
    [['search', 'completed'], ['answer', 'in_progress']], 'the delta updated the snapshot');
  assert.match(a.messages.filter((m) => m.role === 'assistant').at(-1).content, /It is sunny\./);
});

test('a clarify question ends the run with an interrupt; resume answers it and the same run goes on', async () => {
  const a = agent();
  say(a, 'please clarify');
  const { events } = await run(a);
  assertWellFormed(events, a.threadId, events[0].runId);
  const outcome = events.at(-1).outcome;
  assert.equal(outcome.type, 'interrupt');
  const [interrupt] = outcome.interrupts;
  assert.equal(interrupt.message, 'Which city?');
  assert.deepEqual(interrupt.responseSchema.enum, ['Paris', 'Rome']);
  assert.deepEqual(a.pendingInterrupts.map((i) => i.id), [interrupt.id]);
  const next = await run(a, { runId: 'resume-' + randomUUID(), resume: [{ interruptId: interrupt.id, status: 'resolved', payload: 'Rome' }] });
  assertWellFormed(next.events, a.threadId, next.events[0].runId);
  assert.equal(next.events.at(-1).type, 'RUN_FINISHED');
  assert.equal(next.events.at(-1).outcome, undefined);
  assert.match(a.messages.filter((m) => m.role === 'assistant').at(-1).content, /You chose Rome\./);
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  assert.equal(thread.messages.filter((m) => m.type === 'assistant').length, 1, 'one Parley run answered both');
});

test('a clarify cancelled through resume cancels the run, which ends for this client as a success', async () => {
  const a = agent();
  say(a, 'clarify something');
  const { events } = await run(a);
  const [interrupt] = events.at(-1).outcome.interrupts;
  const next = await run(a, { resume: [{ interruptId: interrupt.id, status: 'cancelled' }] });
  assertWellFormed(next.events, a.threadId, next.events[0].runId);
  assert.equal(next.events.at(-1).type, 'RUN_FINISHED');
  assert.equal(next.events.at(-1).outcome, undefined);
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  const runId = thread.messages.find((m) => m.type === 'assistant').runId;
  assert.equal((await parley('/runs/' + runId + '/state')).run.status, 'CANCELLED');
});

test("a failing run is a RUN_ERROR with Parley's error code, after closing what it opened", async () => {
  const a = agent();
  say(a, 'please fail');
  const { events } = await run(a);
  assertWellFormed(events, a.threadId, events[0].runId);
  assert.equal(events.at(-1).type, 'RUN_ERROR');
  assert.equal(events.at(-1).code, 'RUNTIME_FAILED');
  assert.match(events.at(-1).message, /500/);
});

test('an approval denied through resume: the action does not run and the run goes on', async () => {
  const a = agent();
  say(a, 'refund 4711');
  const { events } = await run(a);
  const outcome = events.at(-1).outcome;
  assert.equal(outcome.type, 'interrupt');
  const [interrupt] = outcome.interrupts;
  assert.equal(interrupt.reason, 'approval');
  assert.match(interrupt.message, /4711/);
  assert.ok(interrupt.responseSchema.properties.decision.enum.includes('deny'));
  const next = await run(a, { resume: [{ interruptId: interrupt.id, status: 'cancelled' }] });
  assertWellFormed(next.events, a.threadId, next.events[0].runId);
  assert.equal(next.events.at(-1).type, 'RUN_FINISHED');
  assert.match(a.messages.filter((m) => m.role === 'assistant').at(-1).content, /The tool failed/);
});

test('a client tool: the run ends with the call, the tool message answers it and the run goes on', async () => {
  const a = agent();
  const tools = [{ name: 'where_am_i', description: 'The page tells where the person is',
    parameters: { type: 'object', properties: { zone: { type: 'string' } } } }];
  say(a, 'client tool where_am_i');
  const { events } = await run(a, { tools });
  assertWellFormed(events, a.threadId, events[0].runId);
  assert.equal(events.at(-1).type, 'RUN_FINISHED');
  assert.equal(events.at(-1).outcome, undefined);
  assert.ok(!types(events).includes('TOOL_CALL_RESULT'));
  const call = a.messages.find((m) => m.role === 'assistant' && m.toolCalls?.length).toolCalls[0];
  assert.equal(call.function.name, 'where_am_i');
  a.addMessage({ id: randomUUID(), role: 'tool', toolCallId: call.id, content: 'Lisbon' });
  const next = await run(a, { tools });
  assertWellFormed(next.events, a.threadId, next.events[0].runId);
  assert.equal(next.events.at(-1).type, 'RUN_FINISHED');
  assert.match(a.messages.filter((m) => m.role === 'assistant').at(-1).content, /The page said: Lisbon/);
});

test('an abort stops the run, keeps the partial answer, and the thread takes a new message at once', async () => {
  const a = agent();
  say(a, 'wait for me');
  await new Promise((resolve) => {
    a.runAgent({}, {
      onTextMessageContentEvent: () => { setTimeout(() => a.abortRun(), 10); },
      onRunFailed: () => resolve(),
    }).then(resolve, resolve);
  });
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  const runId = thread.messages.find((m) => m.type === 'assistant').runId;
  let state;
  for (let i = 0; i < 100; i++) {
    state = await parley('/runs/' + runId + '/state');
    if (state.run.status === 'CANCELLED') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(state.run.status, 'CANCELLED');
  const after = await parley('/sessions/' + encodeURIComponent(a.threadId));
  assert.match(after.messages.find((m) => m.type === 'assistant').text, /Partial answer/);
  say(a, 'hello');
  const { events } = await run(a);
  assertWellFormed(events, a.threadId, events[0].runId);
  assert.equal(events.at(-1).type, 'RUN_FINISHED');
  assert.equal(a.messages.filter((m) => m.role === 'assistant').at(-1).content, 'Hello from the scripted runtime.');
});

test("another owner's thread is refused with 404 and stays unchanged", async () => {
  const mine = agent();
  say(mine, 'hello');
  await run(mine);
  const intruder = agent('mallory-' + randomUUID(), mine.threadId);
  say(intruder, 'let me in');
  await assert.rejects(run(intruder), /HTTP 404/);
  const thread = await parley('/sessions/' + encodeURIComponent(mine.threadId));
  assert.equal(thread.messages.filter((m) => m.type === 'user').length, 1);
});

test('a shorter history with a new message is an edit: a new branch beside the old one', async () => {
  const a = agent();
  const first = say(a, 'hello');
  await run(a);
  say(a, 'second question');
  await run(a);
  const edited = agent(OWNER, a.threadId);
  edited.addMessage({ id: first, role: 'user', content: 'hello' });
  const replacement = say(edited, 'another second question');
  const { events } = await run(edited);
  assertWellFormed(events, a.threadId, events[0].runId);
  assert.equal(events.at(-1).type, 'RUN_FINISHED');
  assert.deepEqual(edited.messages.filter((m) => m.role === 'user').map((m) => m.id), [first, replacement]);
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  const users = thread.messages.filter((m) => m.type === 'user');
  assert.deepEqual(users.map((m) => m.clientMessageId), [first, replacement]);
  const fork = thread.branches[users[1].id];
  assert.deepEqual([fork.index, fork.count], [1, 2], 'the old second question is kept beside');
  assert.equal(fork.siblingIds.length, 2);
  assert.ok(fork.siblingIds.includes(users[1].id));
});

test('a message sent without the history (a client that restarted) is appended to the branch, not an edit', async () => {
  const a = agent();
  const first = say(a, 'hello');
  await run(a);
  const second = say(a, 'hello again');
  await run(a);
  const restarted = agent(OWNER, a.threadId);
  const third = say(restarted, 'and once more');
  const { events } = await run(restarted);
  assertWellFormed(events, a.threadId, events[0].runId);
  assert.equal(events.at(-1).type, 'RUN_FINISHED');
  assert.deepEqual(restarted.messages.filter((m) => m.role !== 'reasoning').map((m) => [m.role, m.id === third]),
    [['user', true], ['assistant', false]],
    'the restarted client keeps its own short list (the snapshot deletes nothing and adds nothing before it)');
  const fourth = say(restarted, 'and the last one');
  const next = await run(restarted);
  assert.equal(next.events.at(-1).type, 'RUN_FINISHED');
  assert.deepEqual(restarted.messages.filter((m) => m.role === 'user').map((m) => m.id), [third, fourth]);
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  const users = thread.messages.filter((m) => m.type === 'user');
  assert.deepEqual(users.map((m) => m.clientMessageId), [first, second, third, fourth]);
  for (const user of users) {
    assert.equal(thread.branches[user.id].count, 1, 'no message was edited into a sibling branch');
  }
  assert.equal(thread.messages.filter((m) => m.type === 'assistant').length, 4);
});

test('tool calls of several turns under one execution id stay apart: no warning, each result on its own card', async () => {
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => { warnings.push(args.map(String).join(' ')); };
  const a = agent();
  const tools = [{ name: 'where_am_i', description: 'The page tells where the person is',
    parameters: { type: 'object', properties: { zone: { type: 'string' } } } }];
  try {
    say(a, 'use tools');
    await run(a);
    say(a, 'use tools again');
    const second = await run(a);
    assertWellFormed(second.events, a.threadId, second.events[0].runId);
    say(a, 'client tool where_am_i');
    await run(a, { tools });
    const asked = a.messages.filter((m) => m.role === 'assistant' && m.toolCalls?.length).at(-1).toolCalls[0];
    assert.equal(asked.function.name, 'where_am_i');
    a.addMessage({ id: randomUUID(), role: 'tool', toolCallId: asked.id, content: 'Lisbon' });
    const last = await run(a, { tools });
    assert.equal(last.events.at(-1).type, 'RUN_FINISHED');
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(warnings, [], 'the client warned');
  const cards = a.messages.filter((m) => m.role === 'assistant' && m.toolCalls?.length);
  assert.deepEqual(cards.map((m) => m.toolCalls.map((c) => c.function.name)),
    [['web_search'], ['web_search'], ['where_am_i']]);
  const ids = cards.flatMap((m) => m.toolCalls.map((c) => c.id));
  assert.equal(new Set(ids).size, 3, 'three calls, three ids: ' + ids);
  for (const card of cards.slice(0, 2)) {
    assert.equal(card.toolCalls[0].function.arguments, '{"q":"weather"}', 'arguments of one call only');
    const at = a.messages.indexOf(card);
    const result = a.messages[at + 1];
    assert.equal(result.role, 'tool');
    assert.equal(result.toolCallId, card.toolCalls[0].id, 'the result right after its own card');
    assert.equal(result.content, 'sunny, 21°C');
    assert.equal(a.messages.filter((m) => m.role === 'tool' && m.toolCallId === card.toolCalls[0].id).length, 1);
  }
  assert.match(a.messages.filter((m) => m.role === 'assistant').at(-1).content, /The page said: Lisbon/);
});

test('history the thread does not have is a RUN_ERROR, and changes nothing', async () => {
  const a = agent();
  say(a, 'hello');
  await run(a);
  const other = agent(OWNER, a.threadId);
  say(other, 'a message the thread never saw');
  say(other, 'and a new one');
  const { events } = await run(other);
  assert.deepEqual(types(events), ['RUN_ERROR']);
  assert.equal(events[0].code, 'HISTORY_MISMATCH');
  assert.match(events[0].message, /does not hold the history/);
  const thread = await parley('/sessions/' + encodeURIComponent(a.threadId));
  assert.equal(thread.messages.filter((m) => m.type === 'user').length, 1);
});

test('files sent as content parts are stored once with the message and come back as download links', async () => {
  const a = agent();
  const png = new Uint8Array(300).map((_, i) => (i * 7) & 0xff);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const pdf = new TextEncoder().encode('%PDF-1.4\n' + 'x'.repeat(200));
  const b64 = (bytes) => Buffer.from(bytes).toString('base64');
  // 0.0.59 (CopilotKit's pin) still has the legacy binary part; 1.0 has document parts only
  const pdfPart = pkg.endsWith('0059')
    ? { type: 'binary', mimeType: 'application/pdf', data: b64(pdf), filename: 'report.pdf' }
    : { type: 'document', source: { type: 'data', value: b64(pdf), mimeType: 'application/pdf' }, metadata: { filename: 'report.pdf' } };
  const userId = randomUUID();
  a.addMessage({ id: userId, role: 'user', content: [
    { type: 'text', text: 'what are these?' },
    { type: 'image', source: { type: 'data', value: b64(png), mimeType: 'image/png' }, metadata: { filename: 'dot.png' } },
    pdfPart,
  ] });
  const { events } = await run(a);
  assertWellFormed(events, a.threadId, events[0].runId);
  assert.equal(events.at(-1).type, 'RUN_FINISHED');

  const path = '/sessions/' + encodeURIComponent(a.threadId);
  const sent = (await parley(path)).messages.filter((m) => m.type === 'user');
  assert.equal(sent.length, 1);
  assert.equal(sent[0].text, 'what are these?');
  assert.deepEqual(sent[0].attachments.map((f) => [f.name, f.mediaType, f.size]),
    [['dot.png', 'image/png', 300], ['report.pdf', 'application/pdf', pdf.length]]);
  const served = await fetch(base + '/attachments/' + sent[0].attachments[0].id, { headers: { 'X-Parley-Owner': OWNER } });
  assert.equal(served.status, 200);
  assert.deepEqual(new Uint8Array(await served.arrayBuffer()), png);

  // the snapshot replaced the client's copy: its files are links to their downloads now, not inline bytes
  const mine = a.messages.find((m) => m.id === userId);
  const links = mine.content.filter((p) => p.type !== 'text');
  assert.equal(links.length, 2, JSON.stringify(mine.content));
  for (const [i, part] of links.entries()) {
    assert.equal(part.source.type, 'url');
    assert.ok(part.source.value.endsWith('/attachments/' + sent[0].attachments[i].id), part.source.value);
  }

  // the next turn resends the history with those links: nothing is stored again
  say(a, 'and which is larger?');
  const second = await run(a);
  assert.equal(second.events.at(-1).type, 'RUN_FINISHED', JSON.stringify(second.events.at(-1)));
  const after = (await parley(path)).messages.filter((m) => m.type === 'user');
  assert.equal(after.length, 2);
  assert.deepEqual(after[0].attachments.map((f) => f.id), sent[0].attachments.map((f) => f.id));
  assert.deepEqual(after[1].attachments ?? [], []);
});
