// The example chat page: sessions (searchable), a live view of each run (thinking, status, tools, todos,
// clarify, approvals), a tool the page runs itself, stop, regenerate with variants side by side, edits with a
// "‹ 2 / 3 ›" switcher between their branches, feedback, downloads, files (attach, drag-and-drop, paste) and
// full history — on Parley's browser client.
import { ParleyClient, RunReducer } from '/parley/parley-client.js';
import { renderMarkdown, escapeHtml } from './markdown.js';
import { approvalAnswer, approvalRecord, renderApprovalCard } from './approvals.js';
import { renderOutcome } from './outcome.js';
import { ComposerFiles, acceptDrops, renderMessageFiles } from './attachments.js';

const client = new ParleyClient({ baseUrl: '/api/chat' });

/** The page's own tool: the person's local time and time zone, read from this browser. */
function localTime() {
  const now = new Date();
  return {
    time: now.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }),
    date: now.toLocaleDateString(),
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
}

const $ = (id) => document.getElementById(id);

const state = {
  sessions: [],
  sessionId: null,
  thread: null,
  messages: [],
  variants: {},
  omittedSteps: {}, // answer id -> how many of its oldest steps the view left out
  branches: {}, // user message id -> {index, count, siblingIds}: its place among the message and its edits
  olderCursor: null,
  searchHits: null, // the hits of the search box's query, or null to list every session
  searchTarget: null, // {threadId, messageId?, query} of the hit just opened, marked once its conversation shows
  editing: null, // the id of the user message being edited
  live: new Map(), // runId -> { reducer, handle, status }
  expanded: new Set(),
  feedback: new Map(),
  suggestions: new Map(), // answer id -> follow-up prompts that came after its run (a reload reads them from the view)
  drafts: new Map(),
  approvalErrors: new Map(), // `${runId}/${inputId}` -> why the last decision was not sent
  renaming: null,
};

// ------------------------------------------------------------------ helpers

const ICONS = {
  up: '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path fill="currentColor" d="M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3c0-.4-.2-.8-.4-1.1L13.2 1 6.6 7.6C6.2 8 6 8.5 6 9v10a2 2 0 0 0 2 2h9c.8 0 1.5-.5 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z"/></svg>',
  down: '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path fill="currentColor" d="M22 3h-4v12h4V3zM2 14a2 2 0 0 0 2 2h6.3l-1 4.6v.3c0 .4.2.8.4 1.1l1.1 1 6.6-6.6c.4-.4.6-.9.6-1.4V5a2 2 0 0 0-2-2H7c-.8 0-1.5.5-1.8 1.2l-3 7.1c-.1.2-.2.5-.2.7v2z"/></svg>',
  rename: '<svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="M3 17.2V21h3.8l11-11-3.8-3.8-11 11zM20.7 7a1 1 0 0 0 0-1.4l-2.3-2.3a1 1 0 0 0-1.4 0l-1.8 1.8 3.8 3.8L20.7 7z"/></svg>',
  delete: '<svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="M6 19a2 2 0 0 0 2 2h8a2 2 0 0 0 2-2V7H6v12zM19 4h-3.5l-1-1h-5l-1 1H5v2h14V4z"/></svg>',
};

let errorTimer;
function showError(error) {
  console.error(error);
  const bar = $('error-bar');
  bar.textContent = error?.message ?? String(error);
  bar.hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => { bar.hidden = true; }, 6000);
}

function attempt(fn) {
  return (...args) => Promise.resolve().then(() => fn(...args)).catch(showError);
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    renderMessages();
  });
}

const isRunningStatus = (status) => status === 'IN_PROGRESS';
const activeRuns = () => [...state.live.entries()].filter(([, run]) => !run.reducer.terminal);

// ------------------------------------------------------------------ sessions

async function loadSessions() {
  const page = await client.listSessions({ limit: 100 });
  state.sessions = page.items;
  renderSessions();
}

function renderSessions() {
  const list = $('sessions');
  list.innerHTML = '';
  if (state.searchHits) {
    renderSearchHits(list);
    return;
  }
  for (const session of state.sessions) {
    const item = document.createElement('li');
    item.className = 'session' + (session.id === state.sessionId ? ' active' : '');
    item.dataset.id = session.id;
    if (state.renaming === session.id) {
      const input = document.createElement('input');
      input.value = session.title ?? '';
      input.className = 'rename-input';
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') input.blur();
        if (e.key === 'Escape') { state.renaming = null; renderSessions(); }
      });
      input.addEventListener('blur', attempt(async () => {
        if (state.renaming !== session.id) return;
        state.renaming = null;
        const title = input.value.trim();
        if (title && title !== session.title) {
          const updated = await client.updateSession(session.id, { title });
          if (session.id === state.sessionId) state.thread = updated;
        }
        await loadSessions();
        renderHeader();
      }));
      item.append(input);
      list.append(item);
      input.focus();
      input.select();
      continue;
    }
    const title = document.createElement('span');
    title.className = 'title';
    title.textContent = session.title ?? 'New chat';
    const rename = document.createElement('button');
    rename.type = 'button';
    rename.className = 'rename';
    rename.title = 'Rename';
    rename.innerHTML = ICONS.rename;
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'delete';
    remove.title = 'Delete';
    remove.innerHTML = ICONS.delete;
    item.append(title, rename, remove);
    list.append(item);
  }
}

function renderSearchHits(list) {
  for (const hit of state.searchHits) {
    const item = document.createElement('li');
    item.className = 'session hit' + (hit.thread.id === state.sessionId ? ' active' : '');
    item.dataset.id = hit.thread.id;
    if (hit.messageId) item.dataset.messageId = hit.messageId;
    const title = document.createElement('span');
    title.className = 'title';
    title.textContent = hit.thread.title ?? 'New chat';
    const snippet = document.createElement('span');
    snippet.className = 'snippet';
    snippet.append(...marked(hit.snippet, hit.highlights ?? []));
    item.append(title, snippet);
    list.append(item);
  }
}

/** The text as nodes, the ranges ({start, end}, in order) in <mark>: text nodes only, never markup. */
function marked(text, ranges) {
  const nodes = [];
  let at = 0;
  for (const { start, end } of ranges) {
    if (start < at) continue;
    if (start > at) nodes.push(document.createTextNode(text.slice(at, start)));
    const mark = document.createElement('mark');
    mark.textContent = text.slice(start, end);
    nodes.push(mark);
    at = end;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

/**
 * Where a search hit that was opened matches, once its conversation shows: the message the hit came from is
 * scrolled to and its words that the query begins are marked (a phrase's words each, wherever they occur). A
 * message older than the page loaded is not shown, and nothing is marked.
 */
function showSearchMatch() {
  const target = state.searchTarget;
  if (!target || target.threadId !== state.sessionId) return;
  state.searchTarget = null;
  if (!target.messageId) return;
  const id = CSS.escape(target.messageId);
  const element = $('messages').querySelector(`.user[data-message-id="${id}"], article.assistant[data-message-id="${id}"]`);
  if (!element) return;
  const words = target.query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const texts = [];
  while (walker.nextNode()) texts.push(walker.currentNode);
  for (const node of texts) {
    const ranges = [];
    for (const token of node.data.matchAll(/[\p{L}\p{N}]+/gu)) {
      if (words.some((w) => token[0].toLowerCase().startsWith(w))) {
        ranges.push({ start: token.index, end: token.index + token[0].length });
      }
    }
    if (ranges.length) node.replaceWith(...marked(node.data, ranges));
  }
  element.classList.add('search-target');
  element.scrollIntoView({ block: 'center' });
}

/** The search box: the sessions matching what it holds, best first; empty, every session again. */
let searchTimer;
let searchSeq = 0;
$('session-search').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(attempt(search), 200);
});

async function search() {
  const query = $('session-search').value.trim();
  const seq = ++searchSeq;
  let hits = null;
  let note = '';
  if (query) {
    try {
      hits = (await client.searchSessions(query, { limit: 50 })).items;
      if (hits.length === 0) note = 'No conversation matches.';
    } catch (e) {
      if (e.code !== 'INVALID_INPUT') throw e;
      hits = [];
      note = e.message;
    }
  }
  if (seq !== searchSeq) return; // a newer query has been sent
  $('search-note').textContent = note;
  $('search-note').hidden = !note;
  state.searchHits = hits;
  renderSessions();
}

$('sessions').addEventListener('click', attempt(async (e) => {
  const item = e.target.closest('.session');
  if (!item || e.target.matches('input')) return;
  const id = item.dataset.id;
  if (e.target.closest('.rename')) {
    state.renaming = id;
    renderSessions();
  } else if (e.target.closest('.delete')) {
    if (!confirm('Delete this conversation?')) return;
    await client.deleteSession(id);
    if (id === state.sessionId) newChat();
    await loadSessions();
  } else {
    if (item.classList.contains('hit')) {
      state.searchTarget = { threadId: id, messageId: item.dataset.messageId, query: $('session-search').value };
    }
    if (id !== state.sessionId) {
      location.hash = `#/s/${id}`;
    } else {
      renderMessages();
      showSearchMatch();
    }
  }
}));

function newChat() {
  closeLiveRuns();
  files.clear();
  state.sessionId = null;
  state.thread = null;
  state.messages = [];
  state.variants = {};
  state.branches = {};
  state.editing = null;
  state.olderCursor = null;
  state.omittedSteps = {};
  if (location.hash) history.replaceState(null, '', location.pathname);
  renderHeader();
  renderSessions();
  renderMessages();
  $('input').focus();
}

function closeLiveRuns() {
  for (const run of state.live.values()) run.handle.close();
  state.live.clear();
  updateReconnectBadge();
}

async function openSession(id) {
  closeLiveRuns();
  if (id !== state.sessionId) files.clear();
  state.sessionId = id;
  const view = await client.getSession(id);
  applyView(view);
  renderSessions();
  showSearchMatch();
  for (const message of view.messages) {
    if (message.type === 'assistant' && isRunningStatus(message.status)) follow(message.runId);
  }
}

function applyView(view) {
  state.thread = view.thread;
  state.messages = view.messages;
  state.variants = view.variants ?? {};
  state.branches = view.branches ?? {};
  state.olderCursor = view.olderCursor ?? null;
  state.omittedSteps = view.omittedSteps ?? {};
  $('model').value = view.thread.modelId ?? '';
  $('skill').value = view.thread.skill ?? '';
  renderHeader();
  renderMessages(true);
}

async function refreshSession() {
  if (!state.sessionId) return;
  const view = await client.getSession(state.sessionId);
  applyView(view);
}

function renderHeader() {
  $('session-title').textContent = state.thread?.title ?? 'New chat';
  $('downloads').hidden = !state.sessionId;
}

/** Downloads the open conversation: Markdown (what the page shows) or JSON (everything). */
async function download(format) {
  const { blob, filename } = await client.exportSession(state.sessionId, { format });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

$('export-markdown').addEventListener('click', attempt(() => download('markdown')));
$('export-json').addEventListener('click', attempt(() => download('json')));

// ------------------------------------------------------------------ runs

function follow(runId) {
  if (state.live.has(runId)) return;
  const sessionId = state.sessionId;
  const run = { reducer: new RunReducer(), status: 'connecting' };
  run.handle = client.watch(runId, {
    reducer: run.reducer,
    onChange: scheduleRender,
    onStatus: (status) => {
      run.status = status;
      updateReconnectBadge();
    },
    // suggestions are made after the run ended, so they come after its stream: the client asks for them then
    onSuggestions: (prompts, answerId) => {
      state.suggestions.set(answerId, prompts);
      if (state.sessionId === sessionId) scheduleRender();
    },
  });
  state.live.set(runId, run);
  updateComposer();
  run.handle.done.then(async () => {
    if (state.sessionId !== sessionId) return;
    await refreshSession();
    state.live.delete(runId);
    await loadSessions();
    updateComposer();
    scheduleRender();
  }).catch(showError);
}

function updateReconnectBadge() {
  const reconnecting = [...state.live.values()].some((run) => run.status === 'reconnecting');
  $('reconnect-badge').hidden = !reconnecting;
}

function updateComposer() {
  const busy = activeRuns().length > 0;
  $('send').disabled = busy || files.busy();
  $('stop').hidden = !busy;
}

/** The open session's id; a new chat's session is created first (by its first message or file). */
async function ensureSession() {
  if (!state.sessionId) {
    const session = await client.createSession({
      modelId: $('model').value || undefined,
      skill: $('skill').value || undefined,
    });
    state.sessionId = session.id;
    state.thread = session;
    history.replaceState(null, '', `#/s/${session.id}`);
  }
  return state.sessionId;
}

const files = new ComposerFiles({
  client,
  tray: $('attachments-tray'),
  fileInput: $('file-input'),
  button: $('attach'),
  ensureSession,
  onChange: () => updateComposer(),
  onError: showError,
});
acceptDrops($('chat'), files);

async function send(text) {
  await ensureSession();
  const attachments = files.ids();
  const ticket = await client.startRun(state.sessionId, {
    message: text,
    modelId: $('model').value || undefined,
    skill: $('skill').value || undefined,
    attachments: attachments.length ? attachments : undefined,
  });
  files.clear();
  follow(ticket.runId);
  await loadSessions();
  state.thread = state.sessions.find((s) => s.id === state.sessionId) ?? state.thread;
  renderHeader();
  renderSessions();
}

$('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = $('input');
  const text = input.value.trim();
  if (!text || activeRuns().length > 0) return;
  if (files.busy()) { showError(new Error('The files are still uploading.')); return; }
  if (files.failed()) { showError(new Error('Remove the files that could not be uploaded first.')); return; }
  input.value = '';
  attempt(send)(text);
});

$('input').addEventListener('paste', (e) => {
  const pasted = [...(e.clipboardData?.files ?? [])];
  if (pasted.length) {
    e.preventDefault();
    files.add(pasted);
  }
});

$('input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    $('composer').requestSubmit();
  }
});

$('stop').addEventListener('click', attempt(async () => {
  for (const [runId] of activeRuns()) await client.cancel(runId);
}));

$('new-session').addEventListener('click', newChat);

$('load-older').addEventListener('click', attempt(async () => {
  const page = await client.messages(state.sessionId, { before: state.olderCursor });
  state.messages = [...page.messages, ...state.messages];
  state.variants = { ...page.variants, ...state.variants };
  state.branches = { ...page.branches, ...state.branches };
  state.olderCursor = page.olderCursor ?? null;
  state.omittedSteps = { ...page.omittedSteps, ...state.omittedSteps };
  renderMessages();
}));

for (const id of ['model', 'skill']) {
  $(id).addEventListener('change', attempt(async () => {
    if (state.sessionId) await client.updateSession(state.sessionId, { [id === 'model' ? 'modelId' : 'skill']: $(id).value || null });
  }));
}

// ------------------------------------------------------------------ rendering the conversation

/** Stored messages with every live run's messages in place of their stored copies. */
function mergedMessages() {
  const liveRuns = new Map([...state.live.entries()].filter(([, run]) => run.reducer.runId !== null));
  const out = [];
  const placed = new Set();
  for (const message of state.messages) {
    const run = liveRuns.get(message.runId);
    if (!run) {
      out.push(message);
    } else if (!placed.has(message.runId)) {
      placed.add(message.runId);
      out.push(...run.reducer.messages());
    }
  }
  for (const [runId, run] of liveRuns) {
    if (!placed.has(runId)) out.push(...run.reducer.messages());
  }
  return out;
}

function buildTurns(messages) {
  const steps = new Map();
  const turns = [];
  const byUser = new Map();
  for (const message of messages) {
    if (message.type === 'user') {
      const turn = { user: message, answers: [] };
      byUser.set(message.id, turn);
      turns.push(turn);
    } else if (message.type === 'assistant') {
      let turn = byUser.get(message.parentMessageId);
      if (!turn) {
        turn = { user: null, answers: [] };
        turns.push(turn);
      }
      if (!turn.answers.some((a) => a.id === message.id)) turn.answers.push(message);
    } else {
      if (!steps.has(message.runId)) steps.set(message.runId, []);
      steps.get(message.runId).push(message);
    }
  }
  return { turns, steps };
}

function renderMessages(scrollToEnd = false) {
  const box = $('messages');
  const nearBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  const focused = document.activeElement?.dataset?.focusKey;
  const merged = mergedMessages();
  $('empty').hidden = merged.length > 0;
  $('older').hidden = !state.olderCursor;
  const { turns, steps } = buildTurns(merged);
  const last = turns[turns.length - 1];
  const html = [];
  for (const turn of turns) {
    if (turn.user) html.push(renderUserMessage(turn.user));
    if (turn.answers.length === 0) continue;
    const many = turn.answers.length > 1;
    html.push(`<div class="variants${many ? ' many' : ''}">`);
    turn.answers.forEach((answer, i) => html.push(renderAnswer(answer, steps.get(answer.runId) ?? [], {
      variant: many ? `Answer ${i + 1} of ${turn.answers.length}` : null,
      latest: turn === last,
    })));
    html.push('</div>');
  }
  $('turns').innerHTML = html.join('');
  if (focused) {
    const again = document.querySelector(`[data-focus-key="${CSS.escape(focused)}"]`);
    if (again) {
      again.focus();
      again.setSelectionRange?.(again.value.length, again.value.length);
    }
  }
  for (const stream of document.querySelectorAll('.thinking-stream')) stream.scrollTop = stream.scrollHeight;
  if (scrollToEnd || nearBottom) box.scrollTop = box.scrollHeight;
  updateComposer();
}

/**
 * The person's message with its edit button and, when it was edited (or is an edit), the switcher between
 * the branches: "‹ 2 / 3 ›". While a run goes on neither is offered (the thread takes one run at a time).
 */
function renderUserMessage(message) {
  const id = escapeHtml(message.id);
  if (state.editing === message.id) {
    const key = `edit/${message.id}`;
    const draft = state.drafts.get(key) ?? message.text;
    return `<div class="user-turn" data-message-id="${id}"><div class="edit-box">
      <textarea class="edit-input" rows="3" data-focus-key="${escapeHtml(key)}">${escapeHtml(draft)}</textarea>
      <div class="edit-buttons"><button type="button" data-action="edit-cancel">Cancel</button>
      <button type="button" class="primary" data-action="edit-save">Save and send</button></div></div></div>`;
  }
  const position = state.branches[message.id];
  const idle = activeRuns().length === 0;
  const tools = [];
  if (position && position.count > 1) {
    const previous = position.siblingIds[position.index - 1];
    const next = position.siblingIds[position.index + 1];
    tools.push(`<span class="branch-switcher">
      <button type="button" data-action="branch" data-target="${escapeHtml(previous ?? '')}" title="Previous version"${previous && idle ? '' : ' disabled'}>‹</button>
      <span class="branch-position">${position.index + 1} / ${position.count}</span>
      <button type="button" data-action="branch" data-target="${escapeHtml(next ?? '')}" title="Next version"${next && idle ? '' : ' disabled'}>›</button></span>`);
  }
  if (idle) tools.push('<button type="button" data-action="edit" title="Edit and send again">✎ Edit</button>');
  return `<div class="user-turn" data-message-id="${id}">${renderMessageFiles(message.attachments, (a) => client.attachmentUrl(a))}`
    + `<div class="user" data-message-id="${id}">${escapeHtml(message.text)}</div>`
    + (tools.length ? `<div class="user-tools">${tools.join('')}</div>` : '') + '</div>';
}

/** Edit, save, cancel and the branch switcher on the person's messages. */
async function userAction(action, button, turn) {
  const messageId = turn.dataset.messageId;
  if (action === 'edit') {
    state.editing = messageId;
    renderMessages();
    document.querySelector('.edit-input')?.focus();
  } else if (action === 'edit-cancel') {
    state.editing = null;
    state.drafts.delete(`edit/${messageId}`);
    renderMessages();
  } else if (action === 'edit-save') {
    const text = turn.querySelector('.edit-input').value.trim();
    if (!text) return;
    button.disabled = true;
    const ticket = await client.editMessage(messageId, {
      text,
      modelId: $('model').value || undefined,
      skill: $('skill').value || undefined,
    });
    state.editing = null;
    state.drafts.delete(`edit/${messageId}`);
    await refreshSession();
    follow(ticket.runId);
  } else if (action === 'branch' && button.dataset.target) {
    applyView(await client.switchBranch(button.dataset.target));
  }
}

function renderAnswer(answer, steps, { variant, latest }) {
  const running = isRunningStatus(answer.status);
  const parts = [`<article class="assistant" data-message-id="${escapeHtml(answer.id)}" data-run-id="${escapeHtml(answer.runId)}" data-status="${answer.status}">`];
  if (variant) parts.push(`<div class="variant-label">${variant}</div>`);
  const panel = renderPanel(answer, steps, running);
  if (running) {
    parts.push(panel);
  } else if (steps.length > 0) {
    const open = state.expanded.has(answer.id) ? ' open' : '';
    parts.push(`<details class="summary" data-summary-for="${escapeHtml(answer.id)}"${open}><summary>${escapeHtml(summaryLine(answer, steps))}</summary>${panel}</details>`);
  }
  parts.push(`<div class="answer${running ? ' pending' : ''}">${renderMarkdown(answer.text)}</div>`);
  if (!running) {
    parts.push(renderOutcome(answer));
    parts.push(renderActions(answer, latest));
    if (latest) parts.push(renderSuggestions(answer));
  }
  parts.push('</article>');
  return parts.join('');
}

function summaryLine(answer, steps) {
  const tools = steps.filter((s) => s.type === 'action_execution').length;
  const thinking = steps.some((s) => s.type === 'thinking');
  const todos = [...steps].reverse().find((s) => s.type === 'todo');
  const clarifies = steps.filter((s) => s.type === 'clarify').length;
  const decided = steps.filter((s) => s.type === 'approval' && !isRunningStatus(s.status)).map(approvalRecord);
  const lastAt = Math.max(answer.createdAt, ...steps.map((s) => s.createdAt));
  const seconds = Math.max(0, (lastAt - answer.createdAt) / 1000);
  const parts = [`Worked for ${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`];
  if (thinking) parts.push('thought it through');
  if (tools) parts.push(`${tools} tool call${tools > 1 ? 's' : ''}`);
  if (todos) parts.push(`todos ${todos.items.filter((t) => t.status === 'COMPLETED').length}/${todos.items.length} done`);
  if (clarifies) parts.push(`${clarifies} question${clarifies > 1 ? 's' : ''}`);
  parts.push(...decided);
  const omitted = state.omittedSteps[answer.id];
  if (omitted) parts.push(`${omitted} earlier step${omitted > 1 ? 's' : ''} not shown`);
  return parts.join(' · ');
}

function renderPanel(answer, steps, running) {
  const out = ['<div class="live-panel">'];
  if (running) {
    const status = [...steps].reverse().find((s) => s.type === 'status');
    const waitsFor = (type) => steps.some((s) => s.type === type && isRunningStatus(s.status));
    const waiting = waitsFor('approval') ? 'Waiting for your approval…' : waitsFor('clarify') ? 'Waiting for your answer…' : null;
    out.push(`<div class="live-status">${escapeHtml(waiting ?? status?.text ?? 'Working…')}</div>`);
  }
  const thinking = steps.filter((s) => s.type === 'thinking').map((s) => s.text).join('\n\n');
  if (thinking) out.push(`<div class="section-title">Thinking</div><div class="thinking-stream">${escapeHtml(thinking)}</div>`);
  const actions = steps.filter((s) => s.type === 'action_execution');
  const results = new Map(steps.filter((s) => s.type === 'result').map((r) => [r.executionId, r]));
  const current = running ? [...actions].reverse().find((a) => isRunningStatus(a.status)) : null;
  if (current) {
    out.push(`<div class="current-tool">Running <strong>${escapeHtml(current.name)}</strong> <code>${escapeHtml(shorten(current.arguments, 120))}</code></div>`);
  }
  const done = actions.filter((a) => a !== current);
  if (done.length) {
    out.push('<div class="section-title">Tools</div><ul class="tool-history">');
    for (const action of done) {
      const result = results.get(action.executionId);
      const failed = action.status === 'FAILED' || result?.error;
      out.push(`<li class="${failed ? 'failed' : ''}"><strong>${escapeHtml(action.name)}</strong> <code>${escapeHtml(shorten(action.arguments, 80))}</code>${result ? ' → ' + escapeHtml(shorten(result.result, 120)) : ''}</li>`);
    }
    out.push('</ul>');
  }
  const todo = [...steps].reverse().find((s) => s.type === 'todo');
  if (todo && todo.items.length) {
    out.push('<div class="section-title">Todo</div><ul class="todo-list">');
    const marks = { PENDING: '○', IN_PROGRESS: '◐', COMPLETED: '●', CANCELLED: '⊘' };
    for (const item of todo.items) {
      out.push(`<li class="${item.status}${item.parent ? ' child' : ''}">${marks[item.status] ?? '○'} ${escapeHtml(item.content)}</li>`);
    }
    out.push('</ul>');
  }
  for (const clarify of steps.filter((s) => s.type === 'clarify')) {
    out.push(isRunningStatus(clarify.status) && running ? renderClarify(answer, clarify)
      : `<div class="clarify-answered">Asked “${escapeHtml(clarify.question)}” — ${clarify.answer.length ? 'you answered ' + escapeHtml(clarify.answer.join(', ')) : 'not answered'}</div>`);
  }
  for (const approval of steps.filter((s) => s.type === 'approval')) {
    const key = `${approval.runId}/${approval.inputId}`;
    out.push(isRunningStatus(approval.status) && running
      ? renderApprovalCard(approval, { draft: state.drafts.get(key), error: state.approvalErrors.get(key) })
      : `<div class="approval-record">${escapeHtml(approvalRecord(approval))}</div>`);
  }
  for (const error of steps.filter((s) => s.type === 'error')) {
    out.push(`<div class="failure">${escapeHtml(error.message)}</div>`);
  }
  out.push('</div>');
  return out.join('');
}

function renderClarify(answer, clarify) {
  const key = `${answer.runId}/${clarify.clarifyId}`;
  const draft = state.drafts.get(key) ?? '';
  const choices = clarify.choices.map((choice) => clarify.multiSelect
    ? `<label><input type="checkbox" class="clarify-check" value="${escapeHtml(choice)}"> ${escapeHtml(choice)}</label>`
    : `<button type="button" class="choice" data-action="choose" data-value="${escapeHtml(choice)}">${escapeHtml(choice)}</button>`).join('');
  return `<div class="clarify-panel" data-run-id="${escapeHtml(answer.runId)}" data-clarify-id="${escapeHtml(clarify.clarifyId)}">
    <div class="question">${escapeHtml(clarify.question)}</div>
    ${choices ? `<div class="choices">${choices}</div>` : ''}
    ${clarify.multiSelect ? '<div><button type="button" class="primary" data-action="choose-many">Submit choices</button></div>' : ''}
    <div class="free"><input type="text" class="clarify-text" data-focus-key="${escapeHtml(key)}" placeholder="Or type an answer…" value="${escapeHtml(draft)}">
    <button type="button" class="primary" data-action="answer-text">Answer</button></div>
  </div>`;
}

/** An answer that was stopped, failed, interrupted or cut off, which the agent can be asked to continue. */
function endedEarly(answer) {
  return ['CANCELLED', 'FAILED', 'INTERRUPTED'].includes(answer.status) || answer.truncated === true;
}

function renderActions(answer, latest) {
  const rating = state.feedback.get(answer.id);
  const usage = answer.usage ? `<span class="usage">${answer.usage.totalTokens} tokens</span>` : '';
  const idle = activeRuns().length === 0;
  const canRegenerate = latest && idle;
  // the first exchange has nothing before it to go back to (edit it instead)
  const canUndo = latest && idle && (state.olderCursor || state.messages.filter((m) => m.type === 'user').length > 1);
  return `<div class="actions">
    <button type="button" data-action="up" class="${rating === 'up' ? 'chosen' : ''}" title="Good answer">${ICONS.up}</button>
    <button type="button" data-action="down" class="${rating === 'down' ? 'chosen' : ''}" title="Bad answer">${ICONS.down}</button>
    ${canRegenerate ? '<button type="button" data-action="regenerate" title="Answer again">↻ Regenerate</button>' : ''}
    ${canRegenerate && endedEarly(answer) ? '<button type="button" data-action="continue" title="Ask the agent to go on from where this answer stopped">→ Continue</button>' : ''}
    ${canUndo ? '<button type="button" data-action="undo" title="Take this exchange back (it stays on its own branch)">↶ Undo</button>' : ''}
    ${!latest && idle ? '<button type="button" data-action="rollback" title="Continue the conversation from this answer; what follows stays on its own branch">⤺ Continue from here</button>' : ''}
    ${usage}
  </div>`;
}

/** The follow-up prompts suggested after the latest answer, as chips that send the prompt when clicked. */
function renderSuggestions(answer) {
  const prompts = answer.suggestions?.prompts ?? state.suggestions.get(answer.id) ?? [];
  if (prompts.length === 0 || activeRuns().length > 0) return '';
  const chips = prompts.map((p) => `<button type="button" class="suggestion" data-action="suggest" data-prompt="${escapeHtml(p)}">${escapeHtml(p)}</button>`);
  return `<div class="suggestions" aria-label="Suggested follow-ups">${chips.join('')}</div>`;
}

function shorten(text, max) {
  const value = String(text ?? '');
  return value.length > max ? value.slice(0, max - 1) + '…' : value;
}

$('turns').addEventListener('toggle', (e) => {
  const id = e.target.dataset?.summaryFor;
  if (!id) return;
  if (e.target.open) state.expanded.add(id); else state.expanded.delete(id);
}, true);

$('turns').addEventListener('input', (e) => {
  if (e.target.matches('.clarify-text, .approval-args, .edit-input')) state.drafts.set(e.target.dataset.focusKey, e.target.value);
});

$('turns').addEventListener('keydown', (e) => {
  if (e.target.matches('.clarify-text') && e.key === 'Enter') {
    e.preventDefault();
    e.target.closest('.clarify-panel').querySelector('[data-action="answer-text"]').click();
  }
});

$('turns').addEventListener('click', attempt(async (e) => {
  const button = e.target.closest('[data-action]');
  if (!button) return;
  const action = button.dataset.action;
  const userTurn = button.closest('.user-turn');
  if (userTurn) {
    await userAction(action, button, userTurn);
    return;
  }
  const article = button.closest('.assistant');
  const card = button.closest('.approval-card');
  if (card) {
    await decide(card, button.dataset.decision);
    return;
  }
  const panel = button.closest('.clarify-panel');
  if (panel) {
    let answer;
    if (action === 'choose') answer = button.dataset.value;
    if (action === 'choose-many') answer = [...panel.querySelectorAll('.clarify-check:checked')].map((c) => c.value);
    if (action === 'answer-text') answer = panel.querySelector('.clarify-text').value.trim();
    if (!answer || (Array.isArray(answer) && answer.length === 0)) return;
    button.disabled = true;
    await client.answer(panel.dataset.runId, panel.dataset.clarifyId, answer);
    state.drafts.delete(`${panel.dataset.runId}/${panel.dataset.clarifyId}`);
    return;
  }
  const messageId = article?.dataset.messageId;
  if (action === 'up' || action === 'down') {
    await client.feedback(messageId, action);
    state.feedback.set(messageId, action);
    scheduleRender();
  } else if (action === 'regenerate') {
    const ticket = await client.regenerate(messageId);
    follow(ticket.runId);
  } else if (action === 'continue') {
    const ticket = await client.continueAnswer(messageId);
    follow(ticket.runId);
  } else if (action === 'rollback') {
    applyView(await client.rollBack(messageId));
  } else if (action === 'undo') {
    applyView(await client.undo(state.sessionId));
  } else if (action === 'suggest') {
    if (activeRuns().length > 0 || files.busy()) return;
    await send(button.dataset.prompt);
  }
}));

/** Sends the decision a card's button stands for; edited arguments that are not JSON are shown, not sent. */
async function decide(card, decision) {
  const { runId, inputId } = card.dataset;
  const key = `${runId}/${inputId}`;
  const approval = mergedMessages().find((m) => m.type === 'approval' && m.runId === runId && m.inputId === inputId);
  if (!approval) return;
  let answer;
  try {
    answer = approvalAnswer(approval.request, decision, card.querySelector('textarea.approval-args')?.value);
  } catch (e) {
    state.approvalErrors.set(key, e.message);
    scheduleRender();
    return;
  }
  state.approvalErrors.delete(key);
  for (const button of card.querySelectorAll('button')) button.disabled = true;
  try {
    await client.answer(runId, inputId, answer);
    state.drafts.delete(key);
  } finally {
    scheduleRender();
  }
}

// ------------------------------------------------------------------ start-up

async function route() {
  const match = /^#\/s\/(.+)$/.exec(location.hash);
  if (match && match[1] !== state.sessionId) await openSession(decodeURIComponent(match[1]));
}

window.addEventListener('hashchange', attempt(route));

async function start() {
  const info = await fetch('/api/example/info').then((r) => (r.ok ? r.json() : null)).catch(() => null);
  if (info) {
    const badge = $('runtime-badge');
    badge.textContent = { simulator: 'Simulator', openai: 'Model' }[info.runtime] ?? 'Hermes';
    badge.title = info.description ?? '';
    badge.hidden = false;
    $('simulator-hint').hidden = info.runtime !== 'simulator';
  }
  // Offered only where the runtime can call it: a runtime without tools refuses runs that bring page tools.
  if (info?.pageTools) {
    client.registerTool('get_local_time', { type: 'object', properties: {} }, localTime,
      { description: "The person's local time, date and time zone, read from their browser" });
  }
  const [models, skills, limits] = await Promise.all([client.models().catch(() => []),
    client.skills().catch(() => []), client.attachmentLimits().catch(() => null)]);
  files.setLimits(limits);
  for (const model of models) $('model').append(new Option(model.provider ? `${model.name} (${model.provider})` : model.name, model.id));
  for (const skill of skills) $('skill').append(new Option(skill.name, skill.id));
  await loadSessions();
  await route();
  renderMessages(true);
}

start().catch(showError);
