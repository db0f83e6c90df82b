import { fail } from '#shared/formats/formatFailure';

type Json = Record<string, unknown>;

/** One Zarr array's metadata, v2 or v3, reduced to what the catalogue shows and a preview needs. */
export interface ZarrArrayMeta {
  readonly path: string;
  readonly shape: number[];
  readonly chunks: number[];
  readonly dtype: string;
  /** v2: the compressor object or null. */
  readonly compressor?: unknown;
  /** v2: filters; v3: the codec chain. */
  readonly filters?: unknown;
  readonly codecs?: unknown;
  readonly fillValue: unknown;
  readonly order: string;
  /** How a chunk's grid index becomes its key under the array's folder. */
  readonly chunkKey: (index: readonly number[]) => string;
}

export function arrayMetaV2(path: string, json: Json): ZarrArrayMeta {
  const shape = integers(json.shape, `${path}/.zarray shape`);
  const chunks = integers(json.chunks, `${path}/.zarray chunks`);
  if (chunks.length !== shape.length)
    fail(`corrupt Zarr array ${show(path)}: chunks and shape differ in length`);
  const separator = json.dimension_separator === '/' ? '/' : '.';
  return {
    path,
    shape,
    chunks,
    dtype: typeof json.dtype === 'string' ? json.dtype : JSON.stringify(json.dtype),
    compressor: json.compressor ?? null,
    filters: json.filters ?? null,
    fillValue: json.fill_value ?? null,
    order: typeof json.order === 'string' ? json.order : 'C',
    chunkKey: (index) => (index.length === 0 ? '0' : index.join(separator)),
  };
}

export function arrayMetaV3(path: string, json: Json): ZarrArrayMeta {
  const shape = integers(json.shape, `${path}/zarr.json shape`);
  const grid = json.chunk_grid as { configuration?: { chunk_shape?: unknown } } | undefined;
  const chunks = integers(grid?.configuration?.chunk_shape, `${path}/zarr.json chunk_grid`);
  if (chunks.length !== shape.length)
    fail(`corrupt Zarr array ${show(path)}: chunk shape and shape differ in length`);
  const encoding = json.chunk_key_encoding as
    { name?: string; configuration?: { separator?: string } } | undefined;
  const v2Keys = encoding?.name === 'v2';
  const separator = encoding?.configuration?.separator ?? (v2Keys ? '.' : '/');
  return {
    path,
    shape,
    chunks,
    dtype: typeof json.data_type === 'string' ? json.data_type : JSON.stringify(json.data_type),
    codecs: json.codecs ?? [],
    fillValue: json.fill_value ?? null,
    order: 'C',
    chunkKey: (index) => {
      const key = index.length === 0 && v2Keys ? '0' : index.join(separator);
      return v2Keys ? key : ['c', ...index].join(separator);
    },
  };
}

function integers(value: unknown, what: string): number[] {
  if (!Array.isArray(value) || !value.every((item) => Number.isSafeInteger(item) && (item as number) >= 0)) {
    return fail(`corrupt Zarr metadata: ${what} is not a list of sizes`);
  }
  return value as number[];
}

function show(path: string): string {
  return path === '' ? '(root)' : `"${path}"`;
}
