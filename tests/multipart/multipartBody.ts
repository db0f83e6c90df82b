import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export type FormPart =
  | { readonly name: string; readonly value: string }
  | {
      readonly name: string;
      readonly filename: string;
      readonly contentType?: string;
      /** Bytes, or chunks produced on demand for bodies too big to build in memory. */
      readonly content: Buffer | (() => Iterable<Buffer>);
    };

export interface MultipartBody {
  readonly contentType: string;
  readonly stream: () => Readable;
}

/** A multipart/form-data body written by hand, as a browser would send it. */
export function multipartBody(
  parts: readonly FormPart[],
  options: { truncateAfterBytes?: number } = {},
): MultipartBody {
  const boundary = `----catalogueBoundary${randomBytes(8).toString('hex')}`;
  function* chunks(): Generator<Buffer> {
    for (const part of parts) {
      yield Buffer.from(`--${boundary}\r\n${partHeaders(part)}\r\n`);
      if ('value' in part) yield Buffer.from(part.value);
      else if (Buffer.isBuffer(part.content)) yield part.content;
      else yield* part.content();
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  const limited =
    options.truncateAfterBytes === undefined
      ? chunks
      : () => truncate(chunks(), options.truncateAfterBytes ?? 0);
  return { contentType: `multipart/form-data; boundary=${boundary}`, stream: () => Readable.from(limited()) };
}

function partHeaders(part: FormPart): string {
  if ('value' in part) return `Content-Disposition: form-data; name="${part.name}"\r\n`;
  const type = part.contentType ?? 'application/octet-stream';
  return `Content-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${type}\r\n`;
}

function* truncate(source: Iterable<Buffer>, maxBytes: number): Generator<Buffer> {
  let sent = 0;
  for (const chunk of source) {
    if (sent + chunk.length >= maxBytes) {
      yield chunk.subarray(0, maxBytes - sent);
      return;
    }
    sent += chunk.length;
    yield chunk;
  }
}

/** size bytes of random content in 64 KiB chunks, generated as the body is sent. */
export function randomChunks(
  size: number,
  onChunk: (chunk: Buffer) => void = () => undefined,
): () => Iterable<Buffer> {
  return function* () {
    for (let sent = 0; sent < size;) {
      const chunk = randomBytes(Math.min(64 * 1024, size - sent));
      onChunk(chunk);
      sent += chunk.length;
      yield chunk;
    }
  };
}
