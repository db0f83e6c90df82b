import { fail } from '#shared/formats/formatFailure';
import { arrayMetaV2, arrayMetaV3, type ZarrArrayMeta } from './zarrArrayMeta';
import { multiscalesOf, type Multiscale } from './multiscales';
import type { ZipArchive, ZipEntry } from './zipArchive';

type Json = Record<string, unknown>;

const maxJsonBytes = 16 * 2 ** 20;
/** Arrays whose metadata is read; a store with more lists these and says it has more. */
export const maxArraysListed = 1000;

/** A Zarr store inside a zip: its root (the shallowest metadata document), version and arrays. */
export interface ZarrStore {
  readonly root: string;
  readonly zarrFormat: 2 | 3;
  readonly nodeType: 'group' | 'array';
  readonly arrays: ZarrArrayMeta[];
  readonly arraysTotal: number;
  readonly multiscales: Multiscale[];
}

export async function readZarrStore(zip: ZipArchive): Promise<ZarrStore> {
  const root = findRoot(zip);
  if (zip.entries.has(`${root}zarr.json`)) return readV3(zip, root);
  return readV2(zip, root);
}

function findRoot(zip: ZipArchive): string {
  let best: string | undefined;
  for (const name of zip.entries.keys()) {
    const match = /^(.*?)(zarr\.json|\.zgroup|\.zarray)$/.exec(name);
    if (!match || (match[1] !== '' && !match[1]!.endsWith('/'))) continue;
    const prefix = match[1]!;
    if (best === undefined || depth(prefix) < depth(best)) best = prefix;
  }
  if (best === undefined) {
    const nested = [...zip.entries.keys()].some((name) => /\.(zip|zarr)$/i.test(name));
    fail(
      `not a Zarr store: the zip has no zarr.json, .zgroup or .zarray${nested ? ' (archives inside it are not opened)' : ''}`,
    );
  }
  return best;
}

function depth(prefix: string): number {
  return prefix.split('/').length;
}

async function readV2(zip: ZipArchive, root: string): Promise<ZarrStore> {
  const isArray = zip.entries.has(`${root}.zarray`);
  const attributes = await readJson(zip, `${root}.zattrs`, false);
  const arrayNames = [...zip.entries.keys()].filter(
    (name) => name.startsWith(root) && /(^|\/)\.zarray$/.test(name),
  );
  const arrays: ZarrArrayMeta[] = [];
  for (const name of arrayNames.sort().slice(0, maxArraysListed)) {
    const path = name.slice(root.length, -'.zarray'.length).replace(/\/$/, '');
    arrays.push(arrayMetaV2(path, (await readJson(zip, name, true)) ?? {}));
  }
  if ((await readJson(zip, `${root}${isArray ? '.zarray' : '.zgroup'}`, true))?.zarr_format !== 2) {
    fail('unsupported Zarr store: its root metadata does not say zarr_format 2');
  }
  return {
    root,
    zarrFormat: 2,
    nodeType: isArray ? 'array' : 'group',
    arrays,
    arraysTotal: arrayNames.length,
    multiscales: multiscalesOf(attributes),
  };
}

async function readV3(zip: ZipArchive, root: string): Promise<ZarrStore> {
  const rootJson = (await readJson(zip, `${root}zarr.json`, true)) ?? {};
  if (rootJson.zarr_format !== 3) fail('unsupported Zarr store: its zarr.json does not say zarr_format 3');
  const names = [...zip.entries.keys()].filter(
    (name) => name.startsWith(root) && /(^|\/)zarr\.json$/.test(name),
  );
  const arrays: ZarrArrayMeta[] = [];
  let total = 0;
  for (const name of names.sort()) {
    if (arrays.length >= maxArraysListed) break;
    const json = name === `${root}zarr.json` ? rootJson : ((await readJson(zip, name, true)) ?? {});
    if (json.node_type !== 'array') continue;
    total++;
    arrays.push(arrayMetaV3(name.slice(root.length, -'zarr.json'.length).replace(/\/$/, ''), json));
  }
  const nodeType = rootJson.node_type === 'array' ? 'array' : 'group';
  return {
    root,
    zarrFormat: 3,
    nodeType,
    arrays,
    arraysTotal: Math.max(total, arrays.length),
    multiscales: multiscalesOf(rootJson.attributes as Json | undefined),
  };
}

async function readJson(zip: ZipArchive, name: string, required: boolean): Promise<Json | undefined> {
  const entry: ZipEntry | undefined = zip.entries.get(name);
  if (!entry) return required ? fail(`corrupt Zarr store: ${name} is missing`) : undefined;
  const text = (await zip.read(entry, maxJsonBytes)).toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    return parsed as Json;
  } catch (error) {
    return fail(`corrupt Zarr metadata: ${name} is not a JSON object (${(error as Error).message})`);
  }
}
