// The line under a finished answer of the chat page (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderOutcome } from '../../main/resources/static/outcome.js';

const answer = { type: 'assistant', id: 'a1', runId: 'r1', status: 'COMPLETED', text: 'The three reasons are: first, ' };

test('an answer the model cut off at its length limit says so', () => {
  assert.match(renderOutcome({ ...answer, truncated: true }), /class="truncated">Answer cut off at the length limit/);
});

test('an answer that simply ended shows no line', () => {
  assert.equal(renderOutcome(answer), '');
  assert.equal(renderOutcome({ ...answer, truncated: false }), '');
});

test('a failed, stopped or interrupted answer says how it ended, markup as text', () => {
  const failed = renderOutcome({ ...answer, status: 'FAILED', error: { code: 'RATE_LIMITED', message: 'slow <b>down</b>' } });
  assert.ok(failed.includes('Failed: slow &lt;b&gt;down&lt;/b&gt;') && !failed.includes('<b>'));
  assert.ok(renderOutcome({ ...answer, status: 'FAILED' }).includes('the run failed'));
  assert.ok(renderOutcome({ ...answer, status: 'CANCELLED' }).includes('Stopped.'));
  assert.ok(renderOutcome({ ...answer, status: 'INTERRUPTED' }).includes('Interrupted'));
});
