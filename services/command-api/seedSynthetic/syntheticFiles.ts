import { createHash } from 'node:crypto';
import { link, mkdir } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { BlobStore } from '#shared/blobStore/blobStore';
import { blobPaths } from '#shared/blobStore/localDisk/blobPaths';
import { uploadPreviewKey } from '#shared/domain/uploads/events';
import { inspectUpload } from '#shared/formats/inspectUpload';
import type { ByteSource } from '#shared/formats/byteSource';
import type { SyntheticFile } from './syntheticBrains';

/** A tiny gzipped NIfTI-1 volume (float32): a ramp with a bright blob whose place depends on `variant`. */
export function tinyNifti(edge: number, variant: number): Buffer {
  const header = Buffer.alloc(352);
  header.writeInt32LE(348, 0);
  [3, edge, edge, edge, 1, 1, 1, 1].forEach((d, i) => header.writeInt16LE(d, 40 + 2 * i));
  header.writeInt16LE(16, 70); // float32
  header.writeInt16LE(32, 72);
  [1, 0.5, 0.5, 0.5].forEach((p, i) => header.writeFloatLE(p, 76 + 4 * i));
  header.writeFloatLE(352, 108);
  header.writeFloatLE(1, 112); // scl_slope
  header.writeUInt8(10, 123); // xyzt_units: mm, s
  header.write('n+1\0', 344, 'latin1');
  const voxels = Buffer.alloc(edge ** 3 * 4);
  const centre = [(variant % 3) + 1, ((variant >> 1) % 3) + 1, ((variant >> 2) % 3) + 1].map(
    (c) => (c * edge) / 4,
  );
  for (let z = 0, i = 0; z < edge; z++)
    for (let y = 0; y < edge; y++)
      for (let x = 0; x < edge; x++, i++) {
        const d2 = (x - centre[0]!) ** 2 + (y - centre[1]!) ** 2 + (z - centre[2]!) ** 2;
        voxels.writeFloatLE(d2 < (edge / 5) ** 2 ? 1000 : x + y + z, i * 4);
      }
  return gzipSync(Buffer.concat([header, voxels]));
}

const bufferSource = (bytes: Buffer): ByteSource => ({
  size: bytes.length,
  open: (range) =>
    Promise.resolve(Readable.from([bytes.subarray(range?.start ?? 0, (range?.end ?? bytes.length - 1) + 1)])),
});

/** One distinct file content of the synthetic catalogue, stored once (`sourceKey`, `previewKey`). */
export interface StoredVariant extends SyntheticFile {
  readonly sourceKey: string;
  readonly previewSourceKey: string | null;
}

export const SYNTHETIC_VARIANTS = 8;
const EDGES = [16, 20, 24, 32];

/**
 * The synthetic catalogue's distinct files: tiny NIfTI volumes, each inspected as the processor
 * inspects uploads (its metadata and PNG preview are the real ones) and stored once under
 * `seed/<sha256>.nii.gz` (and its preview under `seed/<sha256>.png`).
 */
export async function storeVariants(blobs: BlobStore): Promise<StoredVariant[]> {
  const variants: StoredVariant[] = [];
  for (let v = 0; v < SYNTHETIC_VARIANTS; v++) {
    const bytes = tinyNifti(EDGES[v % EDGES.length]!, v);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const filename = `volume-${v + 1}.nii.gz`;
    const inspection = await inspectUpload(bufferSource(bytes), filename);
    if (!inspection.ok) throw new Error(`a synthetic NIfTI did not pass inspection: ${inspection.reason}`);
    const sourceKey = `seed/${sha256}.nii.gz`;
    await blobs.put(sourceKey, Readable.from([bytes]), { contentType: 'application/gzip' });
    let previewSourceKey: string | null = null;
    if (inspection.preview) {
      previewSourceKey = `seed/${sha256}.png`;
      await blobs.put(previewSourceKey, Readable.from([inspection.preview]), { contentType: 'image/png' });
    }
    variants.push({
      filename,
      sizeBytes: bytes.length,
      sha256,
      mimeType: 'application/gzip',
      metadata: inspection.metadata,
      preview: previewSourceKey !== null,
      sourceKey,
      previewSourceKey,
    });
  }
  return variants;
}

export const syntheticBlobKey = (uploadId: string): string => `uploads/${uploadId}.nii.gz`;

/**
 * Gives each upload its own blobs (its bytes and preview), so deleting one brain deletes only its
 * own. On local disk each is a hard link to the variant's file (and its content-type sidecar): one
 * copy of the bytes, many names, each removable alone. Elsewhere (S3) each is a put of the bytes.
 */
export interface BlobLinker {
  place(uploadId: string, variant: StoredVariant): Promise<void>;
}

export function blobLinker(blobs: BlobStore, localRoot: string | undefined): BlobLinker {
  if (localRoot === undefined) {
    const bytes = new Map<string, Promise<Buffer>>();
    const read = (key: string) => {
      let got = bytes.get(key);
      if (!got)
        bytes.set(
          key,
          (got = blobs.get(key).then(async (stream) => {
            const parts: Buffer[] = [];
            for await (const part of stream) parts.push(part as Buffer);
            return Buffer.concat(parts);
          })),
        );
      return got;
    };
    return {
      async place(uploadId, variant) {
        await blobs.put(syntheticBlobKey(uploadId), Readable.from([await read(variant.sourceKey)]), {
          contentType: variant.mimeType,
        });
        if (variant.previewSourceKey)
          await blobs.put(uploadPreviewKey(uploadId), Readable.from([await read(variant.previewSourceKey)]), {
            contentType: 'image/png',
          });
      },
    };
  }
  const made = new Set<string>();
  const linkPair = async (from: string, to: string) => {
    const source = blobPaths(localRoot, from);
    const target = blobPaths(localRoot, to);
    if (!made.has(target.dir)) {
      await mkdir(target.dir, { recursive: true });
      made.add(target.dir);
    }
    await link(source.data, target.data);
    await link(source.meta, target.meta);
  };
  return {
    async place(uploadId, variant) {
      await linkPair(variant.sourceKey, syntheticBlobKey(uploadId));
      if (variant.previewSourceKey) await linkPair(variant.previewSourceKey, uploadPreviewKey(uploadId));
    },
  };
}
