import { createHash, randomBytes } from 'node:crypto';
import { Upload, type UploadOptions } from 'tus-js-client';
import type { Client } from '#tests/support/httpClient';

export const TUS = '/api/file-uploads/tus/';

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

export const randomFile = (size: number): Buffer => randomBytes(size);

export interface TusResult {
  readonly url: string;
}

/** Uploads `bytes` with tus-js-client (no retries: a failure is the test's to see). */
export function tusUpload(
  baseUrl: string,
  token: string,
  bytes: Buffer,
  metadata: Record<string, string>,
  options: Partial<UploadOptions> = {},
): Promise<TusResult> {
  return new Promise((resolve, reject) => {
    const upload = new Upload(bytes, {
      endpoint: `${baseUrl}${TUS}`,
      headers: { Authorization: `Token ${token}` },
      metadata,
      retryDelays: null,
      storeFingerprintForResuming: false,
      ...options,
      onSuccess: () => resolve({ url: upload.url! }),
      onError: (error) => reject(error),
    });
    upload.start();
  });
}

/** The tus request headers a hand-made request needs. */
export function tusHeaders(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'Tus-Resumable': '1.0.0', Authorization: `Token ${token}`, ...extra };
}

export function encodeMetadata(metadata: Record<string, string>): string {
  return Object.entries(metadata)
    .map(([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`)
    .join(',');
}

/** Creates an upload by hand (POST); resolves with the response. */
export async function createTus(
  baseUrl: string,
  token: string,
  length: number,
  metadata: Record<string, string>,
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${baseUrl}${TUS}`, {
    method: 'POST',
    headers: tusHeaders(token, {
      'Upload-Length': String(length),
      'Upload-Metadata': encodeMetadata(metadata),
      ...extra,
    }),
  });
}

export async function patchTus(
  url: string,
  token: string,
  offset: number,
  body: Buffer,
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'PATCH',
    headers: tusHeaders(token, {
      'Upload-Offset': String(offset),
      'Content-Type': 'application/offset+octet-stream',
      ...extra,
    }),
    body,
  });
}

export async function headTus(url: string, token: string): Promise<Response> {
  return fetch(url, { method: 'HEAD', headers: tusHeaders(token) });
}

/** The id of an upload from its URL. */
export const idOf = (url: string): string => url.replace(/\/$/, '').split('/').pop()!;

export async function fileUpload(api: Client, token: string, id: string) {
  return api.get(`/api/file-uploads/${id}/`, { token });
}
