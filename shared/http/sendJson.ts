import type { Response } from 'express';

/**
 * Writes a JSON response directly: res.json() would also hash an ETag and re-check freshness on
 * every call, which this API does not want (ETags carry stream revisions, set by handlers).
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body) ?? 'null');
}

/** A body already serialised. */
export function sendJsonText(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  if (res.req.method === 'HEAD') res.end();
  else res.end(text);
}
