// The chat page's approval card: what it shows, what a decision sends, how it is recorded (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalAnswer, approvalRecord, prettyArguments, renderApprovalCard } from '../../main/resources/static/approvals.js';

const request = {
  kind: 'approval', toolName: 'refund_order', arguments: '{"order":42}', description: 'Refunds <b>42</b>',
  decisions: ['allow_once', 'allow_for_thread', 'deny'], argumentsEditable: true,
};
const approval = { type: 'approval', runId: 'r1', inputId: 'approval:x1', request, status: 'IN_PROGRESS' };

test('the card shows the tool, its arguments pretty-printed and a button per offered decision, markup as text', () => {
  const html = renderApprovalCard(approval);
  assert.match(html, /<textarea class="approval-args"[^>]*>\{\n {2}&quot;order&quot;: 42\n\}<\/textarea>/);
  assert.deepEqual([...html.matchAll(/data-decision="([a-z_]+)"/g)].map((m) => m[1]), ['allow_once', 'allow_for_thread', 'deny']);
  assert.ok(html.includes('Refunds &lt;b&gt;42&lt;/b&gt;') && !html.includes('<b>42'));
  const fixed = renderApprovalCard({ ...approval, request: { ...request, argumentsEditable: false } });
  assert.ok(!fixed.includes('<textarea') && fixed.includes('<pre class="approval-args">'));
  assert.ok(renderApprovalCard(approval, { draft: '{"order":1', error: 'not JSON' }).includes('approval-error'));
  assert.equal(prettyArguments('not json'), 'not json');
});

test('a decision sends edited arguments only when allowing a call whose arguments changed', () => {
  assert.deepEqual(approvalAnswer(request, 'allow_once', '{\n  "order": 42\n}'), { decision: 'allow_once' });
  assert.deepEqual(approvalAnswer(request, 'allow_once', '{"order": 43}'), { decision: 'allow_once', editedArguments: '{"order":43}' });
  assert.deepEqual(approvalAnswer(request, 'deny', '{"order": 43}'), { decision: 'deny' });
  assert.deepEqual(approvalAnswer({ ...request, argumentsEditable: false }, 'allow_once', undefined), { decision: 'allow_once' });
  assert.throws(() => approvalAnswer(request, 'allow_for_thread', '{"order":'), /not valid JSON/);
});

test('the record says how it ended', () => {
  const ended = (fields) => approvalRecord({ ...approval, status: 'COMPLETED', ...fields });
  assert.equal(ended({ outcome: 'ANSWERED', decision: 'allow_once', editedArguments: '{"order":43}' }),
    'Allowed refund_order once (arguments edited)');
  assert.equal(ended({ outcome: 'ANSWERED', decision: 'allow_for_thread' }), 'Allowed refund_order for this conversation');
  assert.equal(ended({ outcome: 'ANSWERED', decision: 'deny' }), 'Denied refund_order');
  assert.equal(ended({ outcome: 'EXPIRED', status: 'CANCELLED' }), 'Expired: refund_order was not approved in time');
  assert.equal(ended({ outcome: 'CANCELLED', status: 'CANCELLED' }), 'Not decided: refund_order was withdrawn when the run ended');
});
