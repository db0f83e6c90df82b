import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pageHeaders } from './pageHeaders';

/** A built file of dist/web/assets and its precompressed forms (manifest.json, scripts/buildWeb.mjs). */
interface AssetInfo {
  readonly bytes: number;
  readonly gzip?: number;
  readonly brotli?: number;
}

interface WebManifest {
  readonly files: Readonly<Record<string, AssetInfo>>;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Where `npm run build` puts the catalogue: dist/web, seen from the sources and from dist alike. */
export function defaultWebDir(): string {
  const root = path.resolve(__dirname, '..', '..', '..');
  const built = path.join(root, 'web');
  return existsSync(path.join(built, 'manifest.json')) ? built : path.join(root, 'dist', 'web');
}

/** The pages of the catalogue (client-side routes): each answers the HTML shell. */
const PAGE_PATH = /^\/(?:|signin\/?|register\/?|tokens\/?|profile\/?|add\/?|brains\/[^/]+\/?)$/;
/** Paths the API and the system endpoints own: never a page, whatever the client accepts. */
const API_PATH = /^\/(?:api|health|metrics|media|assets)(?:\/|$)/;

function accepts(req: IncomingMessage, coding: string): boolean {
  const header = req.headers['accept-encoding'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((part) => {
    const [name, ...params] = part.trim().split(';');
    if (name?.trim().toLowerCase() !== coding) return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Answers a request, or passes it on with next(): a plain Node handler, so the API's requests
 * reach its Express app without going through a second one.
 */
export type WebHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** The path of a request target (what Express calls req.path): up to the query. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** An error in the API's shape ({"detail": ...}), never kept. */
function sendError(res: ServerResponse, status: number, detail: string, head: boolean): void {
  const body = JSON.stringify({ detail });
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(head ? undefined : body);
}

/**
 * The web catalogue, served by the query app in front of its API: the built assets (hashed names,
 * so cached for good, sent brotli- or gzip-compressed as built when the client accepts it; an
 * unknown asset is a 404), and the HTML shell for every page path, with the page CSP (pageHeaders).
 * A browser asking for HTML at an address that is no page gets the shell with a 404 (it says so);
 * every other request goes on to the API unchanged. Undefined when the catalogue is not built.
 */
export function webCatalogue(dir: string = defaultWebDir()): WebHandler | undefined {
  const manifestFile = path.join(dir, 'manifest.json');
  if (!existsSync(manifestFile)) return undefined;
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as WebManifest;
  const shell = readFileSync(path.join(dir, 'index.html'));
  const kept = new Map<string, Buffer>();
  const read = (file: string): Buffer => {
    let bytes = kept.get(file);
    if (!bytes) kept.set(file, (bytes = readFileSync(path.join(dir, 'assets', file))));
    return bytes;
  };

  const sendShell = (res: ServerResponse, status: number, head: boolean) => {
    res.writeHead(status, {
      ...pageHeaders(),
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': shell.length,
      // Always revalidated: a new build names new assets.
      'Cache-Control': 'no-cache',
    });
    res.end(head ? undefined : shell);
  };

  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const head = req.method === 'HEAD';
    const urlPath = pathOf(req.url ?? '/');
    if (urlPath.startsWith('/assets/')) {
      const name = urlPath.slice('/assets/'.length);
      const info = Object.hasOwn(manifest.files, name) ? manifest.files[name] : undefined;
      if (!info || !/^[\w.-]+$/.test(name)) return sendError(res, 404, 'Not found.', head);
      const coding =
        info.brotli !== undefined && accepts(req, 'br')
          ? 'br'
          : info.gzip !== undefined && accepts(req, 'gzip')
            ? 'gzip'
            : undefined;
      let body: Buffer;
      try {
        body = read(coding === 'br' ? `${name}.br` : coding === 'gzip' ? `${name}.gz` : name);
      } catch {
        // Listed in the manifest but unreadable (a build replaced under a running service).
        return sendError(res, 500, 'A server error occurred.', head);
      }
      res.writeHead(200, {
        'Content-Type': CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream',
        'Content-Length': body.length,
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
        ...(coding ? { 'Content-Encoding': coding } : {}),
        ...(info.gzip !== undefined ? { Vary: 'Accept-Encoding' } : {}),
      });
      res.end(head ? undefined : body);
      return;
    }
    if (PAGE_PATH.test(urlPath)) return sendShell(res, 200, head);
    const wantsHtml = (req.headers.accept ?? '').includes('text/html');
    if (wantsHtml && !API_PATH.test(urlPath)) return sendShell(res, 404, head);
    next();
  };
}
