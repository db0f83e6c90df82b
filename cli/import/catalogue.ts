import type { ApiClient } from '#cli/api/apiClient';
import { CliError, ExitCode } from '#cli/exitCodes';

export interface AtlasRef {
  readonly id: number;
  readonly slug: string;
  readonly name: string;
  readonly species: { readonly id: number; readonly scientific_name: string; readonly category: CategoryRef };
}

export interface CategoryRef {
  readonly id: number;
  readonly name: string;
}

export interface SpeciesRef {
  readonly id: number;
  readonly scientific_name: string;
  readonly category: CategoryRef;
  readonly atlases: readonly { readonly id: number; readonly slug: string }[];
  readonly atlases_count: number;
}

/** Where a scan goes, as the user named it (ids, slugs or names; any may be absent). */
export interface PlacementRequest {
  readonly atlas?: string;
  readonly category?: string;
  readonly species?: string;
}

/** The create fields of a resolved placement (ids), or what is wrong and in which column. */
export type Placement =
  | { readonly atlas: number; readonly category?: undefined; readonly species?: string }
  | { readonly atlas?: undefined; readonly category: number; readonly species?: string };

export type Resolution<T> = { readonly ok: T } | { readonly column: string; readonly message: string };

/** What the catalogue knows, asked once per distinct value (import validates every row up front). */
export interface Catalogue {
  atlas(key: string): Promise<AtlasRef | undefined>;
  category(key: string): Promise<CategoryRef | undefined>;
  species(scientificName: string): Promise<SpeciesRef | undefined>;
}

const MAX_LIST_PAGES = 100;

/** The server's catalogue through the API: one request per distinct value, lists read once. */
export function serverCatalogue(api: ApiClient): Catalogue {
  const cache = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, load: () => Promise<T>): Promise<T> => {
    let found = cache.get(key) as Promise<T> | undefined;
    if (!found) cache.set(key, (found = load()));
    return found;
  };
  const detail = async <T>(path: string): Promise<T | undefined> => {
    const response = await api.send({ method: 'GET', path, accept: [404] });
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    return (await response.json()) as T;
  };
  /** Every item of a list (array form, following Link rel="next"). */
  const list = async <T>(path: string): Promise<T[]> => {
    const items: T[] = [];
    let next: string | undefined = path;
    for (let page = 0; next !== undefined && page < MAX_LIST_PAGES; page++) {
      const response: Response = await api.send({ method: 'GET', path: next });
      items.push(...((await response.json()) as T[]));
      next = nextPath(response.headers.get('link'), api.server);
    }
    return items;
  };
  const allAtlases = () => once('atlases', () => list<AtlasRef>('/api/atlases/'));
  const allCategories = () => once('categories', () => list<CategoryRef>('/api/categories/'));
  return {
    atlas: (key) =>
      once(`atlas:${key.toLowerCase()}`, async () => {
        if (/^[0-9]+$/.test(key)) return (await allAtlases()).find((a) => a.id === Number(key));
        return detail<AtlasRef>(`/api/atlases/${encodeURIComponent(key.toLowerCase())}/`);
      }),
    category: (key) =>
      once(`category:${key.toLowerCase()}`, async () => {
        if (/^[0-9]+$/.test(key)) return (await allCategories()).find((c) => c.id === Number(key));
        return detail<CategoryRef>(`/api/categories/${encodeURIComponent(key)}/`);
      }),
    species: (name) =>
      once(`species:${name.toLowerCase()}`, () =>
        detail<SpeciesRef>(`/api/species/${encodeURIComponent(name)}/`),
      ),
  };
}

/** The path and query of a Link rel="next" on the same server, else undefined. */
function nextPath(link: string | null, server: string): string | undefined {
  const match = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link) : null;
  if (!match) return undefined;
  const url = new URL(match[1]!);
  const base = new URL(server);
  const prefix = base.pathname.replace(/\/+$/, '');
  if (url.origin !== base.origin || !url.pathname.startsWith(prefix))
    throw new CliError(`the server's next page is elsewhere: ${url.href}`, ExitCode.failure);
  return `${url.pathname.slice(prefix.length)}${url.search}`;
}

/**
 * Resolves where a scan goes. An atlas places it (species and category follow; a species or
 * category that contradicts it is refused). Without one, a category files it there (a species, when
 * named, must be of that category: the brain itself has no species without an atlas). A species
 * alone picks its atlas when it has exactly one.
 */
export async function resolvePlacement(
  catalogue: Catalogue,
  request: PlacementRequest,
  columns: { atlas: string; category: string; species: string } = {
    atlas: 'atlas',
    category: 'category',
    species: 'species',
  },
): Promise<Resolution<Placement>> {
  const [atlas, category, species] = await Promise.all([
    request.atlas ? catalogue.atlas(request.atlas) : undefined,
    request.category ? catalogue.category(request.category) : undefined,
    request.species ? catalogue.species(request.species) : undefined,
  ]);
  if (request.atlas && !atlas) return { column: columns.atlas, message: `no atlas ${request.atlas}` };
  if (request.category && !category)
    return { column: columns.category, message: `no category ${request.category}` };
  if (request.species && !species)
    return { column: columns.species, message: `no species ${request.species}` };
  if (atlas) {
    if (species && species.id !== atlas.species.id)
      return {
        column: columns.species,
        message: `${species.scientific_name} is not the species of atlas ${atlas.slug} (${atlas.species.scientific_name})`,
      };
    if (category && category.id !== atlas.species.category.id)
      return {
        column: columns.category,
        message: `${category.name} is not the category of atlas ${atlas.slug} (${atlas.species.category.name})`,
      };
    return { ok: { atlas: atlas.id, species: atlas.species.scientific_name } };
  }
  if (category) {
    if (species && species.category.id !== category.id)
      return {
        column: columns.species,
        message: `${species.scientific_name} is not in category ${category.name} (it is in ${species.category.name})`,
      };
    return { ok: { category: category.id, species: species?.scientific_name } };
  }
  if (species) {
    if (species.atlases_count === 1 && species.atlases[0])
      return { ok: { atlas: species.atlases[0].id, species: species.scientific_name } };
    return {
      column: columns.species,
      message: `${species.scientific_name} has ${species.atlases_count} atlases: name the atlas or a category`,
    };
  }
  return { column: columns.atlas, message: 'no atlas or category (give --atlas or --category)' };
}
