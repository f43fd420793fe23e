// The browser client's sends, edits, branches, search and export against a live Parley server (started by
// BrowserClientNodeTest; node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { ParleyClient, ParleyError, newClientMessageId } from '../../main/resources/META-INF/resources/parley/parley-client.js';

const baseUrl = process.env.PARLEY_BASE_URL;
assert.ok(baseUrl, 'PARLEY_BASE_URL must point at a running server');

const owner = (name) => `${name}-${Date.now()}-${Math.random().toString(16).slice(2)}`;
const client = (who, extra = {}) =>
  new ParleyClient({ baseUrl, headers: { 'X-Parley-Owner': who }, reconnectDelays: [20, 50, 100], ...extra });

async function finish(c, ticket) {
  const outcome = await c.watch(ticket.runId).done;
  assert.equal(outcome, 'ended');
  return ticket;
}

const userMessages = (view) => view.messages.filter((m) => m.type === 'user');
const topLevel = (view) => view.messages.filter((m) => m.type === 'user' || m.type === 'assistant').map((m) => m.id);

/**
 * A TCP proxy in front of the server that, for the first `drops` requests matching `match`, lets the request
 * through and cuts the connection as the answer comes back: the server did the work, the client saw the
 * network fail.
 */
async function droppingProxy(match, drops) {
  const upstream = new URL(baseUrl);
  const seen = { dropped: 0, connections: 0 };
  const server = net.createServer((downstream) => {
    seen.connections++;
    const up = net.connect(Number(upstream.port), upstream.hostname);
    let drop = false;
    downstream.on('data', (chunk) => {
      if (!drop && seen.dropped < drops && match(chunk.toString('latin1'))) {
        drop = true;
        seen.dropped++;
      }
      up.write(chunk);
    });
    up.on('data', (chunk) => {
      if (drop) {
        downstream.destroy();
        up.destroy();
      } else {
        downstream.write(chunk);
      }
    });
    const end = () => { downstream.destroy(); up.destroy(); };
    up.on('error', end);
    downstream.on('error', end);
    up.on('end', () => downstream.end());
    downstream.on('end', () => up.end());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}${upstream.pathname}`;
  return { url, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('every send carries its own client message id, returned with the user message', async () => {
  const who = owner('node-ids');
  const c = client(who);
  const session = await c.createSession();
  const one = await finish(c, await c.startRun(session.id, { message: 'same words' }));
  const two = await finish(c, await c.startRun(session.id, { message: 'same words' }));
  assert.notEqual(one.runId, two.runId, 'the same text sent twice is two messages');
  const users = userMessages(await c.getSession(session.id));
  assert.equal(users.length, 2);
  assert.match(users[0].clientMessageId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(users[0].clientMessageId, users[1].clientMessageId);

  const mine = await c.startRun(session.id, { message: 'with my id', clientMessageId: 'my-id-1' });
  const again = await c.startRun(session.id, { message: 'with my id', clientMessageId: 'my-id-1' });
  assert.equal(again.runId, mine.runId);
  assert.equal(again.replayed, true);
  await assert.rejects(c.startRun(session.id, { message: 'other words', clientMessageId: 'my-id-1' }),
    (e) => e instanceof ParleyError && e.status === 409 && e.code === 'CONFLICT');
  await finish(c, mine);
});

test('a send whose connection drops after the server took it is sent again and starts one run', async () => {
  const who = owner('node-retry');
  const direct = client(who);
  const session = await direct.createSession();
  const proxy = await droppingProxy((request) => request.startsWith('POST ') && request.includes('/runs'), 1);
  try {
    const slept = [];
    const viaProxy = client(who, { sleep: async (ms) => { slept.push(ms); } });
    viaProxy.fetch = (url, init) => fetch(url.replace(baseUrl, proxy.url), init);
    const ticket = await viaProxy.startRun(session.id, { message: 'hello through a bad network' });
    assert.equal(proxy.seen.dropped, 1, 'the first answer was cut off');
    assert.equal(slept.length, 1, 'one retry');
    assert.equal(ticket.replayed, true, 'the server had the first send already');
    await finish(direct, ticket);
    const view = await direct.getSession(session.id);
    assert.equal(userMessages(view).length, 1, 'one message, one run');
    assert.equal(view.messages.filter((m) => m.type === 'assistant').length, 1);
  } finally {
    await proxy.close();
  }
});

test('a send that keeps failing on the network gives up with a network error', async () => {
  const dead = net.createServer((socket) => socket.destroy());
  await new Promise((resolve) => dead.listen(0, '127.0.0.1', resolve));
  try {
    const slept = [];
    const c = new ParleyClient({ baseUrl: `http://127.0.0.1:${dead.address().port}/api/chat`, sendRetries: 2,
      reconnectDelays: [5], sleep: async (ms) => { slept.push(ms); } });
    await assert.rejects(c.startRun('s', { message: 'hi' }), (e) => e instanceof ParleyError && e.code === 'NETWORK');
    assert.deepEqual(slept, [5, 5]);
  } finally {
    await new Promise((resolve) => dead.close(resolve));
  }
});

test('an edit starts a branch; switchBranch goes back and forth between the branches', async () => {
  const c = client(owner('node-edit'));
  const session = await c.createSession();
  const first = await finish(c, await c.startRun(session.id, { message: 'plan a trip' }));
  const second = await finish(c, await c.startRun(session.id, { message: 'to Lisbon' }));
  const edit = await finish(c, await c.editMessage(second.userMessageId, { text: 'to Porto' }));
  assert.notEqual(edit.userMessageId, second.userMessageId);

  const view = await c.getSession(session.id);
  assert.deepEqual(topLevel(view), [first.userMessageId, first.assistantMessageId, edit.userMessageId, edit.assistantMessageId]);
  assert.deepEqual(view.branches[edit.userMessageId], { index: 1, count: 2, siblingIds: [second.userMessageId, edit.userMessageId] });

  const back = await c.switchBranch(view.branches[edit.userMessageId].siblingIds[0]);
  assert.deepEqual(topLevel(back).slice(-2), [second.userMessageId, second.assistantMessageId]);
  assert.equal(back.branches[second.userMessageId].index, 0);
  const forth = await c.switchBranch(edit.userMessageId);
  assert.deepEqual(topLevel(forth).slice(-2), [edit.userMessageId, edit.assistantMessageId]);

  await assert.rejects(client('node-mallory').editMessage(first.userMessageId, { text: 'mine' }),
    (e) => e.status === 404 && e.code === 'NOT_FOUND');
  await assert.rejects(c.editMessage(first.assistantMessageId, { text: 'x' }), (e) => e.status === 400);
});

test('search finds the caller\'s sessions with a snippet; export downloads a file', async () => {
  const who = owner('node-find');
  const c = client(who);
  const session = await c.createSession();
  await finish(c, await c.startRun(session.id, { message: 'the quokka is a small wallaby' }));
  await finish(c, await c.startRun((await c.createSession()).id, { message: 'nothing to see' }));
  const found = await c.searchSessions('quokka');
  assert.deepEqual(found.items.map((hit) => hit.thread.id), [session.id]);
  assert.match(found.items[0].snippet, /quokka/i);
  assert.deepEqual((await client(owner('node-other')).searchSessions('quokka')).items, []);
  await assert.rejects(c.searchSessions('x'.repeat(600)), (e) => e.status === 400 && e.code === 'INVALID_INPUT');

  const markdown = await c.exportSession(session.id, { format: 'markdown' });
  assert.equal(markdown.filename, `parley-${session.id}.md`);
  assert.match(markdown.contentType, /^text\/markdown/);
  assert.match(await markdown.blob.text(), /the quokka is a small wallaby/);
  const json = JSON.parse(await (await c.exportSession(session.id)).blob.text());
  assert.equal(json.format, 'parley-thread');
  assert.equal(json.thread.id, session.id);
  await assert.rejects(c.exportSession(session.id, { format: 'pdf' }), (e) => e.status === 400);
});

test('rollBack ends the conversation at an answer and undo takes the last exchange back; nothing is lost', async () => {
  const c = client(owner('node-rollback'));
  const session = await c.createSession();
  const one = await finish(c, await c.startRun(session.id, { message: 'one' }));
  const two = await finish(c, await c.startRun(session.id, { message: 'two' }));
  const three = await finish(c, await c.startRun(session.id, { message: 'three' }));

  const rolled = await c.rollBack(one.assistantMessageId);
  assert.deepEqual(topLevel(rolled), [one.userMessageId, one.assistantMessageId]);
  const again = await finish(c, await c.startRun(session.id, { message: 'two, again' }));
  const view = await c.getSession(session.id);
  assert.deepEqual(view.branches[again.userMessageId].siblingIds, [two.userMessageId, again.userMessageId]);

  const back = await c.switchBranch(two.userMessageId);
  assert.deepEqual(topLevel(back).slice(-2), [three.userMessageId, three.assistantMessageId]);
  const undone = await c.undo(session.id);
  assert.deepEqual(topLevel(undone), [one.userMessageId, one.assistantMessageId, two.userMessageId, two.assistantMessageId]);
  await c.undo(session.id);
  await assert.rejects(c.undo(session.id), (e) => e.status === 409 && e.code === 'CONFLICT');
  await assert.rejects(c.rollBack(one.userMessageId), (e) => e.status === 400);
  await assert.rejects(client(owner('node-stranger')).undo(session.id), (e) => e.status === 404);

  const going = await finish(c, await c.continueAnswer(one.assistantMessageId));
  const continued = await c.getSession(session.id);
  assert.deepEqual(topLevel(continued).slice(-2), [going.userMessageId, going.assistantMessageId]);
  await assert.rejects(c.continueAnswer(one.assistantMessageId), (e) => e.status === 409);
});

test('a file uploaded with uploadAttachment goes with the message and downloads from attachmentUrl', async () => {
  const who = owner('node-files');
  const c = client(who);
  const session = await c.createSession();
  const png = new Uint8Array(600).map((_, i) => (i * 7) & 0xff);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const file = new File([png], 'dot.png', { type: 'image/png' });
  const limits = await c.attachmentLimits();
  assert.ok(limits.acceptedTypes.includes('image/png'), JSON.stringify(limits));
  assert.ok(limits.maxFileBytes > 600);
  const attachment = await c.uploadAttachment(session.id, file);
  assert.equal(attachment.mediaType, 'image/png');
  assert.equal(attachment.name, 'dot.png');
  assert.equal(attachment.size, 600);

  await finish(c, await c.startRun(session.id, { message: 'what is this dot?', attachments: [attachment.id] }));
  const sent = userMessages(await c.getSession(session.id))[0];
  assert.deepEqual(sent.attachments, [{ id: attachment.id, name: 'dot.png', mediaType: 'image/png', size: 600 }]);
  const served = await fetch(c.attachmentUrl(attachment.id), { headers: { 'X-Parley-Owner': who } });
  assert.equal(served.status, 200);
  assert.deepEqual(new Uint8Array(await served.arrayBuffer()), png);

  const pdfAsPng = new File([new TextEncoder().encode('%PDF-1.4 not an image')], 'fake.png', { type: 'image/png' });
  await assert.rejects(c.uploadAttachment(session.id, pdfAsPng), (e) => e.status === 400 && e.code === 'INVALID_INPUT');
  const stranger = client(owner('node-stranger'));
  await assert.rejects(stranger.uploadAttachment(session.id, file), (e) => e.status === 404);
});

test('client message ids are random UUIDs, also without crypto.randomUUID', () => {
  const ids = new Set(Array.from({ length: 100 }, () => newClientMessageId()));
  assert.equal(ids.size, 100);
  const randomUUID = globalThis.crypto.randomUUID;
  try {
    globalThis.crypto.randomUUID = undefined;
    const id = newClientMessageId();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  } finally {
    globalThis.crypto.randomUUID = randomUUID;
  }
});
