// The approval card of the example chat page: what a call that waits for the person's approval will do,
// its arguments (editable where the asker allows it), a button per offered decision, and afterwards a
// one-line record of the decision. Pure functions over approval messages; app.js wires the clicks.
import { escapeHtml } from './markdown.js';

const DECISION_LABELS = {
  allow_once: 'Allow once',
  allow_for_thread: 'Allow for this conversation',
  always_allow: 'Always allow',
  deny: 'Deny',
};

/** The arguments (JSON text) indented for reading; text that is not JSON as it is. */
export function prettyArguments(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return String(text ?? '');
  }
}

/**
 * The card for a pending approval.
 *
 * @param {object} approval the approval message ({inputId, runId, request: {toolName, arguments, description,
 *   decisions, argumentsEditable}})
 * @param {{draft?: string, error?: string}} [view] the person's edit so far and the last refusal to show
 */
export function renderApprovalCard(approval, { draft, error } = {}) {
  const { toolName, description, decisions, argumentsEditable } = approval.request;
  const key = `${approval.runId}/${approval.inputId}`;
  const shown = draft ?? prettyArguments(approval.request.arguments);
  const args = argumentsEditable
    ? `<textarea class="approval-args" data-focus-key="${escapeHtml(key)}" spellcheck="false" rows="${Math.min(12, shown.split('\n').length + 1)}">${escapeHtml(shown)}</textarea>
       <div class="approval-hint">You may edit the arguments (JSON) before allowing the call.</div>`
    : `<pre class="approval-args">${escapeHtml(shown)}</pre>`;
  const buttons = decisions.map((decision) => `<button type="button" class="${decision === 'deny' ? 'danger' : 'primary'}"
    data-action="decide" data-decision="${escapeHtml(decision)}">${escapeHtml(DECISION_LABELS[decision] ?? decision)}</button>`).join('');
  return `<div class="approval-card" data-run-id="${escapeHtml(approval.runId)}" data-input-id="${escapeHtml(approval.inputId)}">
    <div class="approval-title">Allow <strong>${escapeHtml(toolName)}</strong> to run?</div>
    <div class="approval-description">${escapeHtml(description)}</div>
    ${args}
    ${error ? `<div class="approval-error" role="alert">${escapeHtml(error)}</div>` : ''}
    <div class="approval-buttons">${buttons}</div>
  </div>`;
}

/** One line saying how an approval ended: "Allowed refund_order once (arguments edited)", "Denied refund_order", … */
export function approvalRecord(approval) {
  const tool = approval.request.toolName;
  if (approval.outcome === 'EXPIRED') return `Expired: ${tool} was not approved in time`;
  if (approval.outcome !== 'ANSWERED') return `Not decided: ${tool} was withdrawn when the run ended`;
  const edited = approval.editedArguments != null ? ' (arguments edited)' : '';
  switch (approval.decision) {
    case 'allow_once': return `Allowed ${tool} once${edited}`;
    case 'allow_for_thread': return `Allowed ${tool} for this conversation${edited}`;
    case 'always_allow': return `Always allowed ${tool}${edited}`;
    default: return `Denied ${tool}`;
  }
}

/**
 * The answer for `decision` from the card: `{decision, editedArguments?}`, the edited arguments (compact
 * JSON) only when allowing a call whose arguments the person changed.
 *
 * @param {object} request the approval's request
 * @param {string|undefined} text the card's arguments as the person left them (undefined: not editable)
 * @throws {Error} when allowing with edited arguments that are not JSON (nothing is sent)
 */
export function approvalAnswer(request, decision, text) {
  if (decision === 'deny' || !request.argumentsEditable || text === undefined) return { decision };
  let edited;
  try {
    edited = JSON.stringify(JSON.parse(text));
  } catch (e) {
    throw new Error(`The arguments are not valid JSON: ${e.message}`);
  }
  let original;
  try {
    original = JSON.stringify(JSON.parse(request.arguments));
  } catch {
    original = request.arguments;
  }
  return edited === original ? { decision } : { decision, editedArguments: edited };
}
