// How an answer of the chat page ended, as the line shown under its text.
import { escapeHtml } from './markdown.js';

/**
 * The line under a finished answer: why it failed, that it was stopped or interrupted, or that the model cut it
 * off at its length limit (`truncated`); empty for an answer that simply ended.
 */
export function renderOutcome(answer) {
  switch (answer.status) {
    case 'FAILED':
      return `<div class="failure">Failed: ${escapeHtml(answer.error?.message ?? 'the run failed')}</div>`;
    case 'CANCELLED':
      return '<div class="stopped">Stopped.</div>';
    case 'INTERRUPTED':
      return '<div class="stopped">Interrupted: the server stopped while this answer was being written.</div>';
    default:
      return answer.truncated
        ? '<div class="truncated">Answer cut off at the length limit: the model reached its maximum output.</div>'
        : '';
  }
}
