import type { Readable } from 'node:stream';

/** Where an upload's bytes come from: a local file, an object store; read by range, never whole. */
export interface ByteSource {
  readonly size: number;
  /** Stream of bytes [start, end] inclusive (end defaults to size-1). */
  open(range?: { start: number; end?: number }): Promise<NodeJS.ReadableStream | Readable>;
}
