// The chat page's files: which types the attach button takes, sizes, and a sent message's files shown without
// any way to inject markup (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acceptsType, formatSize, renderMessageFiles } from '../../main/resources/static/attachments.js';

test('a type is taken when the server lists it or its family; an unknown type is left to the server', () => {
  const accepted = ['application/pdf', 'image/*', 'text/plain'];
  assert.ok(acceptsType(accepted, 'image/png'));
  assert.ok(acceptsType(accepted, 'IMAGE/WEBP'));
  assert.ok(acceptsType(accepted, 'application/pdf'));
  assert.ok(!acceptsType(accepted, 'application/zip'));
  assert.ok(!acceptsType(accepted, 'imagex/png'), 'a family is matched up to its slash');
  assert.ok(acceptsType(accepted, ''));
  assert.ok(acceptsType(['*/*'], 'video/mp4'));
});

test('sizes read as people expect', () => {
  assert.equal(formatSize(900), '900 B');
  assert.equal(formatSize(1536), '1.5 KB');
  assert.equal(formatSize(20 * 1024 * 1024), '20.0 MB');
});

test('images show as thumbnails and other files as chips, each linking to its download, names as text', () => {
  const html = renderMessageFiles([
    { id: 'a1', name: 'cat <b>.png', mediaType: 'image/png', size: 10 },
    { id: 'a"2', name: 'report.pdf', mediaType: 'application/pdf', size: 2048 },
  ], (id) => `/api/chat/attachments/${encodeURIComponent(id)}`);
  assert.match(html, /<a class="message-file image" href="\/api\/chat\/attachments\/a1"[^>]*><img class="thumb" src="\/api\/chat\/attachments\/a1" alt="cat &lt;b&gt;.png"/);
  assert.match(html, /<a class="message-file chip" href="\/api\/chat\/attachments\/a%222"[^>]*>.*report\.pdf.*2\.0 KB/);
  assert.ok(!html.includes('<b>'));
  assert.equal(renderMessageFiles([], () => ''), '');
  assert.equal(renderMessageFiles(undefined, () => ''), '');
});
