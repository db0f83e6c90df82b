import type { FormatReader, Metadata } from '#shared/formats/inspection';
import type { ReadContext } from '#shared/formats/readContext';
import type { ZarrArrayMeta } from './zarrArrayMeta';
import { readZarrStore, type ZarrStore } from './zarrStore';
import { zarrPreview } from './zarrPreview';
import { ZipArchive } from './zipArchive';

/**
 * A Zarr v2 or v3 store uploaded as a zip, read by random access (yauzl): the central directory,
 * then only the metadata documents and, for the preview, the chunks of the coarsest level's middle.
 */
export class ZarrReader implements FormatReader {
  private zip: ZipArchive | undefined;
  private store: ZarrStore | undefined;

  constructor(private readonly context: ReadContext) {}

  async readMetadata(): Promise<Metadata> {
    this.zip = await ZipArchive.open(this.context);
    this.store = await readZarrStore(this.zip);
    const primary = primaryArray(this.store);
    return {
      format: 'zarr',
      zarr_format: this.store.zarrFormat,
      node_type: this.store.nodeType,
      root: this.store.root,
      ...(primary ? describe(primary) : { shape: null, chunks: null, dtype: null }),
      arrays: this.store.arrays.map((array) => ({ path: array.path, ...describe(array) })),
      arrays_total: this.store.arraysTotal,
      multiscales: this.store.multiscales,
    };
  }

  async preview(): Promise<Buffer | null> {
    const { zip, store } = this;
    const coarsest = store && coarsestLevel(store);
    if (!zip || !coarsest) return null;
    return zarrPreview(zip, store.root, coarsest.array, coarsest.scale, this.context.budget);
  }

  close(): void {
    this.zip?.close();
  }
}

function describe(array: ZarrArrayMeta): Record<string, unknown> {
  const codecs =
    array.codecs !== undefined
      ? { codecs: array.codecs }
      : { compressor: array.compressor, filters: array.filters };
  return { shape: array.shape, chunks: array.chunks, dtype: array.dtype, ...codecs };
}

/** The full-resolution level of the first multiscale when there is one, else the first array. */
function primaryArray(store: ZarrStore): ZarrArrayMeta | undefined {
  const path = store.multiscales[0]?.datasets[0]?.path;
  return store.arrays.find((array) => array.path === path) ?? store.arrays[0];
}

function coarsestLevel(store: ZarrStore): { array: ZarrArrayMeta; scale: number[] | null } | undefined {
  const datasets = store.multiscales[0]?.datasets ?? [];
  for (const dataset of [...datasets].reverse()) {
    const array = store.arrays.find((candidate) => candidate.path === dataset.path);
    if (array) return { array, scale: dataset.scale };
  }
  const first = primaryArray(store);
  return first ? { array: first, scale: null } : undefined;
}
