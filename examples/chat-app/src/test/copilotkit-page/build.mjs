// Bundles the page into the folder given as the first argument (the test serves it from there).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2];
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['page.jsx'],
  bundle: true,
  outdir: out,
  jsx: 'automatic',
  minify: true,
  define: { 'process.env.NODE_ENV': '"production"' },
  loader: { '.woff2': 'file', '.woff': 'file', '.ttf': 'file' },
  logLevel: 'warning',
});
copyFileSync('index.html', join(out, 'index.html'));
