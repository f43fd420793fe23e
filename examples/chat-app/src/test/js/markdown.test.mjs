// The chat page's Markdown renderer: useful formatting, and no way to inject markup (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown, escapeHtml } from '../../main/resources/static/markdown.js';

test('formatting the agent uses is rendered', () => {
  assert.equal(renderMarkdown('**bold** and *it* and `x<y`'),
    '<p><strong>bold</strong> and <em>it</em> and <code>x&lt;y</code></p>');
  assert.equal(renderMarkdown('# Title\n- one\n- two\n\n1. first\n2. second'),
    '<h3>Title</h3><ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>');
  assert.equal(renderMarkdown('```\n<b>code</b>\n```'), '<pre><code>&lt;b&gt;code&lt;/b&gt;</code></pre>');
  assert.equal(renderMarkdown('[docs](https://example.org/a?b=1&c=2)'),
    '<p><a href="https://example.org/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">docs</a></p>');
  assert.equal(renderMarkdown('line one\nline two'), '<p>line one<br>line two</p>');
});

test('markup in a message is shown as text, never as markup', () => {
  const attacks = [
    '<script>alert(1)</script>',
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">x</a>',
    '"><svg onload=alert(1)>',
    '<style>body{display:none}</style>',
  ];
  for (const attack of attacks) {
    const html = renderMarkdown(attack);
    assert.ok(!/<(script|img|svg|style|a )/i.test(html), `${attack} rendered as ${html}`);
    assert.ok(html.includes(escapeHtml(attack).slice(0, 8)), `${attack} is kept as visible text`);
  }
});

test('links may only point to http, https or mailto', () => {
  const js = renderMarkdown('[click](javascript:alert(1))');
  assert.ok(js.startsWith('<p>click') && !js.includes('<a'), js);
  assert.equal(renderMarkdown('[x](data:text/html;base64,PHNjcmlwdD4=)'), '<p>x</p>');
  assert.equal(renderMarkdown('[mail](mailto:a@b.c)'),
    '<p><a href="mailto:a@b.c" target="_blank" rel="noopener noreferrer">mail</a></p>');
  assert.ok(!renderMarkdown('[x](https://a.b/"onmouseover="alert(1))').includes('" onmouseover'));
});
