import express, { type Request, type RequestHandler, type Response } from 'express';
import { UnsupportedMediaTypeError } from '#shared/errors/httpErrors';
import { asError } from '#shared/errors/asError';
import { fromBodyParserError } from './bodyParserError';

/** What a route accepts besides JSON. */
export type BodyMode = 'json' | 'multipart';

export type BodyReadResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'json'; readonly body: unknown }
  | { readonly kind: 'form'; readonly body: unknown }
  | { readonly kind: 'stream' };

const NONE: BodyReadResult = { kind: 'none' };
const STREAM: BodyReadResult = { kind: 'stream' };

function run(parser: RequestHandler, req: Request, res: Response, contentType: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    void parser(req, res, (error?: unknown) => {
      if (error) reject(asError(fromBodyParserError(error, contentType)));
      else resolve((req as { body?: unknown }).body);
    });
  });
}

/** An empty body (no Content-Length or 0, not chunked) is no body, whatever its Content-Type. */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function mediaType(header: string): string {
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

function isJson(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Content negotiation for request bodies: JSON everywhere; multipart (left unread for the handler
 * to stream) and url-encoded forms only where the route declares multipart; anything else is 415.
 */
export function createBodyReader(limitBytes: number) {
  const json = express.json({ limit: limitBytes, strict: true, type: () => true });
  const form = express.urlencoded({
    limit: limitBytes,
    extended: false,
    parameterLimit: 1000,
    type: () => true,
  });

  return async function readBody(req: Request, res: Response, mode: BodyMode): Promise<BodyReadResult> {
    if (!hasBody(req)) return NONE;
    const header = req.headers['content-type'] ?? '';
    const type = mediaType(header);
    if (isJson(type)) return { kind: 'json', body: await run(json, req, res, header) };
    if (mode === 'multipart' && type === 'multipart/form-data') return STREAM;
    if (mode === 'multipart' && type === 'application/x-www-form-urlencoded') {
      return { kind: 'form', body: await run(form, req, res, header) };
    }
    throw new UnsupportedMediaTypeError(header);
  };
}
