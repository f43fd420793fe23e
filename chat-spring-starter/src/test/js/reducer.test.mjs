// Runs chat-core's reducer test vectors against the browser reducer (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunReducer } from '../../main/resources/META-INF/resources/parley/reducer.js';

const here = dirname(fileURLToPath(import.meta.url));
const vectors = process.env.PARLEY_REDUCER_VECTORS
  ?? join(here, '../../../../chat-core/src/test/resources/reducer-vectors');
const files = readdirSync(vectors).filter((f) => f.endsWith('.json')).sort();

test('there are vectors to run', () => {
  assert.ok(files.length >= 10, `expected at least 10 vectors in ${vectors}, found ${files.length}`);
});

for (const file of files) {
  test(file, () => {
    const vector = JSON.parse(readFileSync(join(vectors, file), 'utf8'));
    const reducer = new RunReducer();
    for (const event of vector.events) reducer.apply(event);
    const expected = vector.expected;
    assert.equal(reducer.status, expected.status, 'status');
    assert.equal(reducer.lastSeq, expected.lastSeq, 'lastSeq');
    assert.deepEqual(reducer.error, expected.error ?? null, 'error');
    assert.deepEqual(reducer.usage, expected.usage ?? null, 'usage');
    assert.equal(reducer.runtimeSessionId, expected.runtimeSessionId ?? null, 'runtimeSessionId');
    assert.equal(reducer.guardrailsFailureReason, expected.guardrailsFailureReason ?? null, 'guardrailsFailureReason');
    assert.deepEqual(reducer.messages(), expected.messages, 'messages');
  });
}
