#!/usr/bin/env node
// The web catalogue's build (`npm run build` runs it): web/src bundled by esbuild into dist/web/ —
// hashed, immutable files under assets/ (the NiiVue viewer a separate chunk, loaded only by a brain
// page), each also precompressed (.br, .gz) so the server never compresses per request, the HTML
// shell naming them, and manifest.json (the files with their sizes, read by the server and the bench).
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, 'dist', 'web');
const assetsDir = path.join(outDir, 'assets');
/** Smaller files are sent as they are: compressing them saves less than the headers cost. */
const COMPRESS_MIN_BYTES = 512;

const started = Date.now();
rmSync(outDir, { recursive: true, force: true });
mkdirSync(assetsDir, { recursive: true });

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { app: 'web/src/main.tsx' },
  outdir: assetsDir,
  bundle: true,
  splitting: true,
  format: 'esm',
  target: ['es2022', 'chrome100', 'firefox100', 'safari15'],
  platform: 'browser',
  minify: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});

const toUrl = (file) =>
  `/assets/${path.relative(assetsDir, path.join(root, file)).split(path.sep).join('/')}`;
const entry = Object.entries(result.metafile.outputs).find(
  ([, output]) => output.entryPoint === 'web/src/main.tsx',
);
if (!entry) throw new Error('buildWeb: esbuild produced no entry output');
const [entryFile, entryOutput] = entry;
const script = toUrl(entryFile);
const css = entryOutput.cssBundle ? toUrl(entryOutput.cssBundle) : undefined;
// The chunks the entry imports statically: preloaded with it (the viewer's chunk is dynamic, not among them).
const preloads = entryOutput.imports.filter((i) => i.kind === 'import-statement').map((i) => toUrl(i.path));

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Brain catalogue</title>
<meta name="description" content="Browse, search and view brain imaging scans">
<link rel="icon" href="data:,">
${css ? `<link rel="stylesheet" href="${css}">\n` : ''}${preloads.map((p) => `<link rel="modulepreload" href="${p}">\n`).join('')}<script type="module" src="${script}"></script>
</head>
<body>
<div id="app"><noscript>The catalogue needs JavaScript; the API is at <a href="/api/docs/">/api/docs/</a>.</noscript></div>
</body>
</html>
`;
writeFileSync(path.join(outDir, 'index.html'), html);

const files = {};
for (const name of readdirSync(assetsDir)) {
  const file = path.join(assetsDir, name);
  const bytes = readFileSync(file);
  const info = { bytes: statSync(file).size };
  if (bytes.length >= COMPRESS_MIN_BYTES && /\.(js|css|map|svg|json)$/.test(name)) {
    const gz = gzipSync(bytes, { level: 9 });
    const br = brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: bytes.length > 256 * 1024 ? 9 : 11,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    });
    writeFileSync(`${file}.gz`, gz);
    writeFileSync(`${file}.br`, br);
    Object.assign(info, { gzip: gz.length, brotli: br.length });
  }
  files[name] = info;
}
// What the list page loads before it shows anything: the entry, its static chunks, its stylesheet.
const listPage = [script, ...preloads].map((url) => files[url.slice('/assets/'.length)]);
const manifest = {
  entry: script,
  css: css ?? null,
  preloads,
  files,
  listPageJs: {
    bytes: listPage.reduce((sum, f) => sum + f.bytes, 0),
    gzip: listPage.reduce((sum, f) => sum + (f.gzip ?? f.bytes), 0),
    brotli: listPage.reduce((sum, f) => sum + (f.brotli ?? f.bytes), 0),
  },
};
writeFileSync(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
if (!process.env.BUILD_WEB_QUIET)
  console.log(
    `web catalogue built in ${Date.now() - started} ms: list page JS ${manifest.listPageJs.gzip} bytes gzip (${path.relative(root, outDir)})`,
  );
