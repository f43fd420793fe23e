// Bundles the example (the v2 chat, src/app.jsx, into app.js; the v1 chat, src/app-v1.jsx, into app-v1.js) with
// its two pages into the folder given as the first argument (default: dist).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2] ?? 'dist';
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['src/app.jsx', 'src/app-v1.jsx'],
  bundle: true,
  outdir: out,
  jsx: 'automatic',
  minify: true,
  define: { 'process.env.NODE_ENV': '"production"' },
  loader: { '.woff2': 'file', '.woff': 'file', '.ttf': 'file' },
  logLevel: 'warning',
});
for (const html of ['index.html', 'v1.html']) {
  copyFileSync(html, join(out, html));
}
