// Bundles the pages (the v2 chat, page.jsx, and the v1 chat, page-v1.jsx) into the folder given as the first
// argument (the test serves it from there).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2];
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['page.jsx', 'page-v1.jsx'],
  bundle: true,
  outdir: out,
  jsx: 'automatic',
  minify: true,
  define: { 'process.env.NODE_ENV': '"production"' },
  loader: { '.woff2': 'file', '.woff': 'file', '.ttf': 'file' },
  logLevel: 'warning',
});
for (const html of ['index.html', 'index-v1.html']) {
  copyFileSync(html, join(out, html));
}
