import type { IncomingMessage } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import type { BusboyInstance } from '@fastify/busboy';
import { BlobTooLargeError } from '#shared/blobStore/blobStore';
import { ValidationError } from '#shared/errors/httpErrors';
import { unstorableTextProblem } from '#shared/infra/postgres/storableText';
import { cleanupStoredFiles } from './cleanupStoredFiles';
import { discardRequestBody } from './discardRequestBody';
import { HeadTap } from './headTap';
import * as errors from './multipartErrors';
import type { FileFieldSpec, MultipartSettings, ParsedMultipart } from './parseMultipartOptions';
import type { StoredFile } from './storedFile';

/**
 * One request being parsed (text fields, field names and file names are held to the one rule for
 * client text, shared/infra/postgres/storableText): the first failure of any kind (parser, limit, put, client abort) stops
 * it, and run() then rejects only after every put has settled and every stored blob is deleted.
 */
export class MultipartSession {
  private readonly fields = new Map<string, string>();
  private readonly files = new Map<string, StoredFile>();
  private readonly fileFieldsSeen = new Set<string>();
  /** One per file: settles when its put has, never rejects (a failure goes through fail()). */
  private readonly puts: Promise<void>[] = [];
  /** File streams not yet ended: abandoning the form destroys them, whatever the parser does. */
  private readonly openStreams = new Set<Readable>();
  private failure: Error | undefined;
  private rejectParsing: (err: Error) => void = () => undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly parser: BusboyInstance,
    private readonly settings: MultipartSettings,
  ) {}

  async run(): Promise<ParsedMultipart> {
    try {
      await this.parse();
      await Promise.all(this.puts);
      if (this.failure) throw this.failure;
      return { fields: Object.fromEntries(this.fields), files: Object.fromEntries(this.files) };
    } catch (err) {
      await this.abandon();
      throw this.failure ?? err;
    }
  }

  /** Resolves once busboy has read the whole form; rejects with the first failure of any kind. */
  private parse(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.rejectParsing = reject;
      // busboy gives no name (undefined, whatever its types say) for a part named "": like Django,
      // such parts are skipped.
      this.parser.on('field', (name: string | undefined, value, _nameTruncated, valueTruncated) => {
        if (name) this.guarded(() => this.onField(name, value, valueTruncated));
      });
      this.parser.on(
        'file',
        (name: string | undefined, stream, filename: string | undefined, _, mimeType) => {
          if (name) this.guarded(() => this.onFile(name, stream, { filename: filename ?? '', mimeType }));
          else drop(stream);
        },
      );
      this.parser.on('fieldsLimit', () => this.fail(errors.tooManyFields(this.settings.maxFields)));
      this.parser.on('error', (err) => this.fail(errors.malformedMultipart(err)));
      this.parser.on('finish', resolve);
      this.req.on('error', () => this.fail(errors.uploadAborted()));
      this.req.on('close', () => {
        if (!this.req.complete) this.fail(errors.uploadAborted());
      });
      this.req.pipe(this.parser);
    });
  }

  /** A bug in a handler must fail this request, not escape into busboy and leave it hanging. */
  private guarded(handle: () => void): void {
    try {
      handle();
    } catch (err) {
      this.fail(toError(err));
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.rejectParsing(this.failure);
  }

  private onField(name: string, value: string, truncated: boolean): void {
    if (this.failure) return;
    if (truncated) return this.fail(errors.fieldTooLarge(name, this.settings.maxFieldBytes));
    const problem = unstorableTextProblem(name) ?? unstorableTextProblem(value);
    if (problem) return this.fail(ValidationError.field(name, problem));
    this.fields.set(name, value);
  }

  private onFile(field: string, stream: Readable, info: { filename: string; mimeType: string }): void {
    if (this.failure) return drop(stream);
    const problem = unstorableTextProblem(field) ?? unstorableTextProblem(info.filename);
    if (problem) {
      drop(stream);
      return this.fail(ValidationError.field(field, problem));
    }
    const spec = Object.hasOwn(this.settings.files, field) ? this.settings.files[field] : undefined;
    if (!spec || this.fileFieldsSeen.has(field)) {
      drop(stream);
      return this.fail(spec ? errors.repeatedFileField(field) : errors.unexpectedFileField(field));
    }
    this.fileFieldsSeen.add(field);
    this.puts.push(this.store(field, stream, info, spec));
  }

  private async store(
    field: string,
    stream: Readable,
    info: { filename: string; mimeType: string },
    spec: FileFieldSpec,
  ): Promise<void> {
    this.openStreams.add(stream);
    stream.once('close', () => this.openStreams.delete(stream));
    const tap = new HeadTap(this.settings.headBytes);
    // A parser error destroys the file stream, which fails the put through the tap.
    pipeline(stream, tap, () => undefined);
    try {
      const key = spec.keyFor(info);
      const stored = await this.settings.blobStore.put(key, tap, {
        contentType: info.mimeType,
        maxBytes: spec.maxBytes,
      });
      this.files.set(field, {
        field,
        key,
        ...info,
        size: stored.size,
        sha256: stored.sha256,
        head: tap.head(),
      });
    } catch (err) {
      tap.destroy();
      this.fail(err instanceof BlobTooLargeError ? errors.fileTooLarge(field, spec.maxBytes) : toError(err));
    }
  }

  /** Stops reading the form, lets every put settle, and deletes whatever did get stored. */
  private async abandon(): Promise<void> {
    this.req.unpipe(this.parser);
    this.parser.destroy();
    // The parser does not end the part it was in: its put would wait for bytes that never come.
    for (const stream of this.openStreams) stream.destroy(errors.uploadAborted());
    discardRequestBody(this.req, this.settings.maxDrainBytes);
    await Promise.all(this.puts);
    await cleanupStoredFiles(this.settings.blobStore, [...this.files.values()]);
  }
}

/** busboy waits for every file stream to be read, and destroys it with an error when abandoned. */
function drop(stream: Readable): void {
  stream.on('error', () => undefined);
  stream.resume();
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
