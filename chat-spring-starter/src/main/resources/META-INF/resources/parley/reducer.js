// Parley's reducer for the browser: folds a run's events into its messages.
// It implements exactly the rules of dev.parley.chat.reduce.RunReducer (see its Javadoc) and passes the
// same JSON test vectors (chat-core/src/test/resources/reducer-vectors). Messages are plain objects in
// the JSON shape the server writes: {type, id, threadId, runId, parentMessageId?, status, createdAt, ...}.

const TERMINAL = new Set(['run_finished', 'run_failed']);
const FINAL_STATUS = { SUCCEEDED: 'COMPLETED', FAILED: 'FAILED', CANCELLED: 'CANCELLED', INTERRUPTED: 'INTERRUPTED' };
const TERMINAL_RUN = new Set(Object.keys(FINAL_STATUS));

/** True for the events that end a run. */
export function isTerminal(event) {
  return TERMINAL.has(event.type);
}

/** The text a message streams into, by kind. */
function streamedField(message) {
  switch (message.type) {
    case 'assistant':
    case 'thinking':
      return 'text';
    case 'action_execution':
      return 'arguments';
    default:
      return null;
  }
}

function clone(message) {
  const copy = { ...message };
  for (const key of ['items', 'choices', 'answer']) {
    if (Array.isArray(copy[key])) copy[key] = copy[key].map((v) => (typeof v === 'object' && v !== null ? { ...v } : v));
  }
  return copy;
}

/** Folds one run's events. Not shared between runs; apply events in seq order (replays are ignored). */
export class RunReducer {
  constructor() {
    this.slots = new Map();
    this.actionByExecutionId = new Map();
    this.clarifyByClarifyId = new Map();
    this.threadId = null;
    this.runId = null;
    this.assistantMessageId = null;
    this.status = 'QUEUED';
    this.lastSeq = 0;
    this.error = null;
    this.finishReason = null;
    this.usage = null;
    this.runtimeSessionId = null;
    this.guardrailsFailureReason = null;
    this.pending = 0;
  }

  /** Applies one run event ({runId, seq, timestamp, event}). Returns true if it was applied. */
  apply(logged) {
    if (logged.seq <= this.lastSeq) return false;
    this.lastSeq = logged.seq;
    const e = logged.event;
    if (e.type === 'run_started') {
      if (this.runId === null) {
        this.threadId = e.threadId;
        this.runId = e.runId;
        this.assistantMessageId = e.assistantMessageId;
        this.status = 'RUNNING';
      }
      return true;
    }
    if (this.runId === null || TERMINAL_RUN.has(this.status)) return false;
    const at = logged.timestamp;
    switch (e.type) {
      case 'messages':
        this.onMessages(e);
        break;
      case 'text_delta': {
        const slot = this.assistantSlot(e.messageId, at);
        if (slot) slot.text += e.delta;
        break;
      }
      case 'text_final': {
        const slot = this.assistantSlot(e.messageId, at);
        if (slot) slot.text = e.text;
        break;
      }
      case 'thinking_delta': {
        let slot = this.slots.get(e.messageId);
        if (!slot) slot = this.put(this.step('thinking', e.messageId, 'IN_PROGRESS', at, { text: '' }));
        else if (slot.base.type !== 'thinking') break;
        slot.text += e.delta;
        break;
      }
      case 'tool_call_start':
        if (!this.actionByExecutionId.has(e.executionId) && !this.slots.has(e.messageId)) {
          this.put(this.step('action_execution', e.messageId, 'IN_PROGRESS', at,
            { executionId: e.executionId, name: e.name, arguments: e.arguments ?? '' }));
          this.actionByExecutionId.set(e.executionId, e.messageId);
        }
        break;
      case 'tool_call_args': {
        const id = this.actionByExecutionId.get(e.executionId);
        if (id !== undefined) this.slots.get(id).text += e.delta;
        break;
      }
      case 'tool_call_result':
        this.onToolCallResult(e, at);
        break;
      case 'todos': {
        const existing = this.slots.get(e.messageId);
        this.put(this.step('todo', e.messageId, 'IN_PROGRESS', existing ? existing.base.createdAt : at,
          { items: (e.items ?? []).map((item) => ({ ...item })) }));
        break;
      }
      case 'status': {
        const existing = this.slots.get(e.messageId);
        this.put(this.step('status', e.messageId, 'COMPLETED', existing ? existing.base.createdAt : at,
          { level: e.level, text: e.text }));
        break;
      }
      case 'clarify_request':
        if (!this.clarifyByClarifyId.has(e.clarifyId) && !this.slots.has(e.messageId)) {
          this.put(this.step('clarify', e.messageId, 'IN_PROGRESS', at, {
            clarifyId: e.clarifyId, question: e.question, choices: [...(e.choices ?? [])],
            multiSelect: Boolean(e.multiSelect), answer: [],
          }));
          this.clarifyByClarifyId.set(e.clarifyId, e.messageId);
          this.pending++;
          this.status = 'WAITING_FOR_INPUT';
        }
        break;
      case 'clarify_resolved':
        this.onClarifyResolved(e);
        break;
      case 'usage': {
        this.usage = { inputTokens: e.inputTokens, outputTokens: e.outputTokens, totalTokens: e.totalTokens };
        const answer = this.slots.get(this.assistantMessageId);
        if (answer && answer.base.type === 'assistant') answer.base.usage = { ...this.usage };
        break;
      }
      case 'runtime_session':
        this.runtimeSessionId = e.sessionId;
        break;
      case 'run_finished':
        this.finishReason = e.reason ?? null;
        this.finish(e.status);
        break;
      case 'run_failed':
        this.onFailed(e, at);
        break;
      default:
        break; // unknown kinds are ignored
    }
    return true;
  }

  step(type, id, status, createdAt, fields) {
    const message = { type, id, threadId: this.threadId, runId: this.runId };
    if (this.assistantMessageId !== null) message.parentMessageId = this.assistantMessageId;
    message.status = status;
    message.createdAt = createdAt;
    return Object.assign(message, fields);
  }

  put(message) {
    const field = streamedField(message);
    const slot = { base: { ...message }, field, text: field ? (message[field] ?? '') : '' };
    const existing = this.slots.get(message.id);
    if (existing) {
      existing.base = slot.base;
      existing.field = slot.field;
      existing.text = slot.text;
      return existing;
    }
    this.slots.set(message.id, slot);
    return slot;
  }

  onMessages(e) {
    for (const message of e.messages ?? []) {
      this.put(clone(message));
      if (message.type === 'action_execution' && !this.actionByExecutionId.has(message.executionId)) {
        this.actionByExecutionId.set(message.executionId, message.id);
      } else if (message.type === 'clarify' && !this.clarifyByClarifyId.has(message.clarifyId)) {
        this.clarifyByClarifyId.set(message.clarifyId, message.id);
      }
    }
    let count = 0;
    for (const slot of this.slots.values()) {
      if (slot.base.type === 'clarify' && slot.base.status === 'IN_PROGRESS') count++;
    }
    if (count > 0 && this.status === 'RUNNING') this.status = 'WAITING_FOR_INPUT';
    else if (count === 0 && this.status === 'WAITING_FOR_INPUT') this.status = 'RUNNING';
    this.pending = count;
    if (e.guardrailsFailureReason != null) this.guardrailsFailureReason = e.guardrailsFailureReason;
  }

  assistantSlot(messageId, at) {
    const slot = this.slots.get(messageId);
    if (!slot) return this.put(this.step('assistant', messageId, 'IN_PROGRESS', at, { text: '' }));
    return slot.base.type === 'assistant' ? slot : null;
  }

  onToolCallResult(e, at) {
    if (this.slots.has(e.messageId)) return;
    let name = '';
    const actionId = this.actionByExecutionId.get(e.executionId);
    if (actionId !== undefined) {
      const action = this.slots.get(actionId);
      name = action.base.name;
      if (action.base.status === 'IN_PROGRESS') action.base.status = e.error ? 'FAILED' : 'COMPLETED';
    }
    this.put(this.step('result', e.messageId, 'COMPLETED', at,
      { executionId: e.executionId, name, result: e.result, error: Boolean(e.error) }));
  }

  onClarifyResolved(e) {
    const id = this.clarifyByClarifyId.get(e.clarifyId);
    if (id === undefined) return;
    const slot = this.slots.get(id);
    if (slot.base.status !== 'IN_PROGRESS') return;
    const answered = e.outcome === 'ANSWERED';
    slot.base.status = answered ? 'COMPLETED' : 'CANCELLED';
    slot.base.answer = answered ? [...(e.answer ?? [])] : [];
    this.pending--;
    if (this.pending === 0 && this.status === 'WAITING_FOR_INPUT') this.status = 'RUNNING';
  }

  onFailed(e, at) {
    this.error = { code: e.code, message: e.message };
    const answer = this.slots.get(this.assistantMessageId);
    if (answer && answer.base.type === 'assistant') answer.base.error = { ...this.error };
    const errorId = `${this.runId}:error`;
    if (!this.slots.has(errorId)) {
      this.put(this.step('error', errorId, 'COMPLETED', at, { code: e.code, message: e.message }));
    }
    this.finish('FAILED');
  }

  finish(status) {
    this.status = status;
    this.pending = 0;
    const final = FINAL_STATUS[status];
    for (const slot of this.slots.values()) {
      if (slot.base.status === 'IN_PROGRESS') slot.base.status = final;
    }
  }

  /** True once the run ended. */
  get terminal() {
    return TERMINAL_RUN.has(this.status);
  }

  /** The message with this id (a fresh object), or undefined. */
  message(id) {
    const slot = this.slots.get(id);
    return slot ? RunReducer.materialize(slot) : undefined;
  }

  /** Every message of the run, in order of first appearance (fresh objects). */
  messages() {
    return [...this.slots.values()].map((slot) => RunReducer.materialize(slot));
  }

  /** The clarify questions still waiting for an answer. */
  pendingClarifies() {
    return this.messages().filter((m) => m.type === 'clarify' && m.status === 'IN_PROGRESS');
  }

  static materialize(slot) {
    const message = clone(slot.base);
    if (slot.field) message[slot.field] = slot.text;
    return message;
  }
}
