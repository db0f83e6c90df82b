import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { BodyFactory } from '#cli/api/apiClient';
import type { TransferProgress } from '#cli/output/transferProgress';

export interface FilePart {
  readonly field: string;
  readonly path: string;
  readonly size: number;
}

/**
 * A multipart/form-data body streamed from disk: the fields, then the file read in chunks as the
 * connection takes them (back-pressure), never the whole file in memory. Its Content-Length is
 * exact, so proxies and the server's size limit see the size up front. Each call makes a new
 * stream: a retry sends the file again from its start.
 */
export function multipartFileBody(
  fields: Readonly<Record<string, string | undefined>>,
  file: FilePart,
  progress: TransferProgress,
): BodyFactory {
  return () => {
    const boundary = `----bic${randomBytes(16).toString('hex')}`;
    const head = Buffer.from(
      Object.entries(fields)
        .filter((entry): entry is [string, string] => entry[1] !== undefined)
        .map(([name, value]) => `--${boundary}\r\n${disposition(name)}\r\n\r\n${value}\r\n`)
        .join('') +
        `--${boundary}\r\n${disposition(file.field, path.basename(file.path))}\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    async function* chunks(): AsyncGenerator<Uint8Array> {
      progress.start(file.size);
      yield head;
      for await (const chunk of createReadStream(file.path, { highWaterMark: 256 * 1024 })) {
        const bytes = chunk as Buffer;
        yield bytes;
        progress.advance(bytes.length);
      }
      yield tail;
    }
    return {
      body: ReadableStream.from(chunks()),
      headers: {
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(head.length + file.size + tail.length),
      },
    };
  };
}

/** A Content-Disposition line; the file name also RFC 5987-encoded so any name survives. */
function disposition(name: string, filename?: string): string {
  const base = `Content-Disposition: form-data; name="${quoted(name)}"`;
  if (filename === undefined) return base;
  return `${base}; filename="${quoted(filename)}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

const quoted = (text: string): string => text.replace(/[\r\n]/g, ' ').replace(/"/g, '%22');
