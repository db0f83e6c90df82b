import type { IncomingMessage } from 'node:http';
import Busboy, { type BusboyInstance } from '@fastify/busboy';
import { UnsupportedMediaTypeError } from '#shared/errors/httpErrors';
import { discardRequestBody } from './discardRequestBody';
import * as errors from './multipartErrors';
import { MultipartSession } from './multipartSession';
import type { MultipartSettings, ParseMultipartOptions, ParsedMultipart } from './parseMultipartOptions';

export { cleanupStoredFiles } from './cleanupStoredFiles';
export type { StoredFile } from './storedFile';
export type { FileFieldSpec, ParseMultipartOptions, ParsedMultipart } from './parseMultipartOptions';

const KiB = 1024;
const DEFAULTS = {
  maxFields: 100,
  maxFieldBytes: 64 * KiB,
  headBytes: 64 * KiB,
  maxDrainBytes: 64 * KiB * KiB,
};

/**
 * Streams a multipart/form-data request: text fields are collected, each declared file goes
 * straight into the BlobStore (hashed, counted and size-limited on the way, never buffered whole).
 * On any failure every blob this request stored is deleted before the promise rejects, and the rest
 * of the body is drained so the caller can still send its 4xx response.
 */
export async function parseMultipart(
  req: IncomingMessage,
  options: ParseMultipartOptions,
): Promise<ParsedMultipart> {
  const settings: MultipartSettings = {
    blobStore: options.blobStore,
    files: options.files,
    maxFields: options.maxFields ?? DEFAULTS.maxFields,
    maxFieldBytes: options.maxFieldBytes ?? DEFAULTS.maxFieldBytes,
    headBytes: options.headBytes ?? DEFAULTS.headBytes,
    maxDrainBytes: options.maxDrainBytes ?? DEFAULTS.maxDrainBytes,
  };
  let parser: BusboyInstance;
  try {
    parser = createParser(req, settings);
  } catch (err) {
    discardRequestBody(req, settings.maxDrainBytes);
    throw err;
  }
  return new MultipartSession(req, parser, settings).run();
}

function createParser(req: IncomingMessage, settings: MultipartSettings): BusboyInstance {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) throw new UnsupportedMediaTypeError(contentType);
  try {
    return Busboy({
      headers: { ...req.headers, 'content-type': contentType },
      // Browsers send UTF-8 file names and fields.
      defCharset: 'utf8',
      limits: { fields: settings.maxFields, fieldSize: settings.maxFieldBytes },
    });
  } catch (err) {
    throw errors.malformedMultipart(err);
  }
}
