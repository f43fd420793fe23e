// Parley's reducer for the browser: folds a run's events into its messages.
// It implements exactly the rules of dev.parley.chat.reduce.RunReducer (see its Javadoc) and passes the
// same JSON test vectors (chat-core/src/test/resources/reducer-vectors). Messages are plain objects in
// the JSON shape the server writes: {type, id, threadId, runId, parentMessageId?, status, createdAt, ...}.

const TERMINAL = new Set(['run_finished', 'run_failed']);
const FINAL_STATUS = { SUCCEEDED: 'COMPLETED', FAILED: 'FAILED', CANCELLED: 'CANCELLED', INTERRUPTED: 'INTERRUPTED' };
const TERMINAL_RUN = new Set(Object.keys(FINAL_STATUS));
/** Approval decisions in the order chat-core keeps them; allow_once and deny are always offered. */
const DECISIONS = ['allow_once', 'allow_for_thread', 'always_allow', 'deny'];

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
  if (copy.request && typeof copy.request === 'object') copy.request = cloneRequest(copy.request);
  return copy;
}

/** A copy of an input's request (its arrays copied too). */
function cloneRequest(request) {
  const copy = { ...request };
  for (const key of ['choices', 'decisions']) if (Array.isArray(copy[key])) copy[key] = [...copy[key]];
  return copy;
}

/**
 * An input's request as chat-core reads it: a clarify with its choices and multiSelect, an approval with
 * allow_once and deny always among its decisions, in chat-core's order.
 */
function normalizeRequest(request) {
  const copy = cloneRequest(request ?? {});
  if (copy.kind === 'clarify') {
    copy.choices = copy.choices ?? [];
    copy.multiSelect = Boolean(copy.multiSelect);
  } else if (copy.kind === 'approval') {
    const offered = new Set(['allow_once', 'deny', ...(copy.decisions ?? [])]);
    copy.decisions = DECISIONS.filter((d) => offered.has(d));
    copy.argumentsEditable = Boolean(copy.argumentsEditable);
  }
  return copy;
}

/** An older clarify_request / clarify_resolved as the input_requested / input_resolved it stands for. */
function currentForm(e) {
  if (e.type === 'clarify_request') {
    return {
      type: 'input_requested', messageId: e.messageId, inputId: e.clarifyId, resumeToken: e.resumeToken,
      request: { kind: 'clarify', question: e.question, choices: e.choices ?? [], multiSelect: Boolean(e.multiSelect) },
    };
  }
  if (e.type === 'clarify_resolved') {
    const answered = e.outcome === 'ANSWERED';
    return {
      type: 'input_resolved', inputId: e.clarifyId, outcome: answered ? 'ANSWERED' : 'CANCELLED',
      answer: answered ? { kind: 'clarify', answer: e.answer ?? [] } : undefined,
    };
  }
  return e;
}

/** Folds one run's events. Not shared between runs; apply events in seq order (replays are ignored). */
export class RunReducer {
  constructor() {
    this.slots = new Map();
    this.actionByExecutionId = new Map();
    /** Every input the run asked for, by input id, in the order asked: {asked, pending}. */
    this.inputs = new Map();
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
    const e = currentForm(logged.event);
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
      case 'input_requested':
        this.onInputRequested(e, at);
        break;
      case 'input_resolved':
        this.onInputResolved(e);
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
      case 'run_finished': {
        this.finishReason = e.reason ?? null;
        const answer = this.slots.get(this.assistantMessageId);
        if (e.truncated === true && answer && answer.base.type === 'assistant') answer.base.truncated = true;
        this.finish(e.status);
        break;
      }
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
      } else if (message.type === 'clarify') {
        this.track(message.clarifyId, message, { kind: 'clarify', question: message.question,
          choices: message.choices ?? [], multiSelect: Boolean(message.multiSelect) });
      } else if (message.type === 'approval') {
        this.track(message.inputId, message, message.request);
      }
    }
    this.countPendingInputs();
    if (e.guardrailsFailureReason != null) this.guardrailsFailureReason = e.guardrailsFailureReason;
  }

  /** Follows an input a snapshot message shows: pending while the message is in progress. */
  track(inputId, message, request) {
    if (!this.inputs.has(inputId)) {
      this.inputs.set(inputId, { asked: this.pendingInput(inputId, message.id, request, null, message.createdAt), pending: true });
    }
    this.inputs.get(inputId).pending = message.status === 'IN_PROGRESS';
  }

  /** A pending input in the shape the state endpoint lists: {runId, inputId, kind, messageId, request, deadline?, createdAt}. */
  pendingInput(inputId, messageId, request, deadline, createdAt) {
    const input = { runId: this.runId, inputId, kind: request.kind, messageId, request: normalizeRequest(request) };
    if (deadline != null) input.deadline = deadline;
    input.createdAt = createdAt;
    return input;
  }

  countPendingInputs() {
    let count = 0;
    for (const track of this.inputs.values()) if (track.pending) count++;
    if (count > 0 && this.status === 'RUNNING') this.status = 'WAITING_FOR_INPUT';
    else if (count === 0 && this.status === 'WAITING_FOR_INPUT') this.status = 'RUNNING';
    this.pending = count;
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

  onInputRequested(e, at) {
    const request = normalizeRequest(e.request);
    if (this.inputs.has(e.inputId) || (this.slots.has(e.messageId) && request.kind !== 'client_tool')) return;
    if (request.kind === 'clarify') {
      this.put(this.step('clarify', e.messageId, 'IN_PROGRESS', at, {
        clarifyId: e.inputId, question: request.question, choices: [...request.choices],
        multiSelect: request.multiSelect, answer: [],
      }));
    } else if (request.kind === 'approval') {
      this.put(this.step('approval', e.messageId, 'IN_PROGRESS', at, { inputId: e.inputId, request: cloneRequest(request) }));
    }
    this.inputs.set(e.inputId, { asked: this.pendingInput(e.inputId, e.messageId, request, e.deadline, at), pending: true });
    this.pending++;
    this.status = 'WAITING_FOR_INPUT';
  }

  onInputResolved(e) {
    const track = this.inputs.get(e.inputId);
    if (!track || !track.pending) return;
    track.pending = false;
    const answered = e.outcome === 'ANSWERED';
    const slot = this.slots.get(track.asked.messageId);
    if (slot && slot.base.status === 'IN_PROGRESS' && slot.base.type === 'clarify') {
      slot.base.status = answered ? 'COMPLETED' : 'CANCELLED';
      slot.base.answer = answered && e.answer?.kind === 'clarify' ? [...(e.answer.answer ?? [])] : [];
    } else if (slot && slot.base.status === 'IN_PROGRESS' && slot.base.type === 'approval') {
      slot.base.status = answered ? 'COMPLETED' : 'CANCELLED';
      slot.base.outcome = e.outcome;
      const decided = e.answer?.kind === 'approval' ? e.answer : null;
      if (decided?.decision != null) slot.base.decision = decided.decision;
      if (decided?.editedArguments != null) slot.base.editedArguments = decided.editedArguments;
    }
    this.pending--;
    if (this.pending === 0 && this.status === 'WAITING_FOR_INPUT') this.status = 'RUNNING';
  }

  onFailed(e, at) {
    this.error = { code: e.code, message: e.message };
    if (e.retryAfterSeconds != null) this.error.retryAfterSeconds = e.retryAfterSeconds;
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
    for (const track of this.inputs.values()) track.pending = false;
    const final = FINAL_STATUS[status];
    for (const slot of this.slots.values()) {
      if (slot.base.status !== 'IN_PROGRESS') continue;
      slot.base.status = final;
      if (slot.base.type === 'approval' && slot.base.outcome == null) slot.base.outcome = 'CANCELLED';
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

  /**
   * Every input still waiting for the person, of every kind, oldest first (fresh objects), in the shape
   * `GET /runs/{id}/state` lists them: {runId, inputId, kind, messageId, request, deadline?, createdAt}.
   */
  pendingInputs() {
    return [...this.inputs.values()].filter((t) => t.pending).map((t) => ({ ...t.asked, request: cloneRequest(t.asked.request) }));
  }

  /** True while the input with this id waits for the person. */
  isPending(inputId) {
    return this.inputs.get(inputId)?.pending === true;
  }

  static materialize(slot) {
    const message = clone(slot.base);
    if (slot.field) message[slot.field] = slot.text;
    return message;
  }
}
