import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '#tests/support/httpClient';
import { encodeTiff } from '#tests/media/imageEncoders';

/** A NIfTI-1 single file: the 348-byte header, 4 bytes of extension flag, then 2×2×2 uint8 voxels. */
export function niftiBytes(): Buffer {
  const header = Buffer.alloc(352);
  header.writeInt32LE(348, 0); // sizeof_hdr
  [3, 2, 2, 2, 1, 1, 1, 1].forEach((d, i) => header.writeInt16LE(d, 40 + 2 * i)); // dim
  header.writeInt16LE(2, 70); // datatype: uint8
  header.writeInt16LE(8, 72); // bitpix
  [1, 1, 1, 1].forEach((p, i) => header.writeFloatLE(p, 76 + 4 * i)); // pixdim
  header.writeFloatLE(352, 108); // vox_offset
  header.write('n+1\0', 344, 'latin1'); // magic
  return Buffer.concat([header, Buffer.from([0, 1, 2, 3, 4, 5, 6, 7])]);
}

export const tiffBytes = (): Buffer => encodeTiff(2, 2, 'II');

export interface FilePart {
  readonly field?: 'file' | 'image';
  readonly name: string;
  readonly bytes: Buffer;
}

export function brainForm(fields: Record<string, string | number | boolean>, ...files: FilePart[]): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, String(v));
  for (const f of files)
    data.append(f.field ?? 'file', new Blob([f.bytes], { type: 'application/octet-stream' }), f.name);
  return data;
}

export const nifti = (name = 'brain.nii'): FilePart => ({ name, bytes: niftiBytes() });

let unique = 0;
/** A name no other test of the run uses (category, species and atlas names are unique). */
export const fresh = (prefix: string): string => `${prefix}${process.pid}x${unique++}`;

export interface Taxonomy {
  readonly category: { id: number; name: string };
  readonly species: { id: number; scientific_name: string };
  readonly atlas: { id: number; slug: string };
}

/** A category, a species in it and an atlas of that species (staff creates them). */
export async function createTaxonomy(api: Client, staff: string): Promise<Taxonomy> {
  const category = await api.post('/api/categories/', { token: staff, json: { name: fresh('cat') } });
  if (category.status !== 201) throw new Error(`category: ${category.status} ${category.text}`);
  const species = await api.post('/api/species/', {
    token: staff,
    json: {
      name: fresh('sp'),
      scientific_name: `${fresh('Genus')} species`,
      description: '',
      category: category.body.id,
    },
  });
  if (species.status !== 201) throw new Error(`species: ${species.status} ${species.text}`);
  const atlas = await api.post('/api/atlases/', {
    token: staff,
    json: { name: fresh('Atlas '), species: species.body.id, description: 'an atlas' },
  });
  if (atlas.status !== 201) throw new Error(`atlas: ${atlas.status} ${atlas.text}`);
  return { category: category.body, species: species.body, atlas: atlas.body };
}

/** The data files (not sidecars or temp files) the local-disk BlobStore holds under uploads/. */
export function storedUploads(dataDir: string): string[] {
  const dir = path.join(dataDir, 'blobs', 'uploads');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => !f.includes('~'));
}
