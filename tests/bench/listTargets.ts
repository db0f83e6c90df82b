import { SEARCH_WORD, SPECIES } from './catalogueEvents';
import { searchVocabulary } from './searchVocabulary';

/** Paths sent at random, so every request asks for another species and page. */
export const PATHS_PER_KIND = 1000;
export const PAGE_SIZE = 20;
export const FACETS = 'species,atlas,category,verified';

export interface ListTargets {
  readonly list: readonly string[];
  readonly search: readonly string[];
  /** The first page of each text of the search vocabulary (10,000 distinct, searchVocabulary.ts). */
  readonly vocabulary: readonly string[];
  readonly facets: readonly string[];
  /** The last page of the largest species, and of the whole catalogue. */
  readonly deepSpecies: string;
  readonly deepAll: string;
  /** A 20-brain page as the service answers it, for the bare handler to serve. */
  readonly samplePage: unknown;
  /** Whether this build answers `facets=` with facet counts (or ignores the parameter). */
  readonly facetsAnswered: boolean;
}

interface Envelope {
  readonly count: number;
  readonly results: readonly unknown[];
}

async function envelope(baseUrl: string, path: string): Promise<Envelope> {
  const response = await fetch(`${baseUrl}${path}`);
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Envelope;
}

const listPath = (query: Record<string, string | number>): string =>
  `/api/brains/?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()}`;

const lastPage = (count: number): number => Math.max(1, Math.ceil(count / PAGE_SIZE));

/**
 * Asks the service how many brains each species has (with and without the search word), then
 * draws PATHS_PER_KIND paths per kind: a random species, a random page within its range.
 */
export async function listTargets(baseUrl: string): Promise<ListTargets> {
  const perSpecies = await Promise.all(
    SPECIES.map(async ([species]) => ({
      species,
      count: (await envelope(baseUrl, listPath({ page: 1, page_size: PAGE_SIZE, species }))).count,
      matching: (
        await envelope(baseUrl, listPath({ page: 1, page_size: PAGE_SIZE, species, search: SEARCH_WORD }))
      ).count,
    })),
  );
  const draw = (make: (s: (typeof perSpecies)[number]) => string): string[] =>
    Array.from({ length: PATHS_PER_KIND }, () =>
      make(perSpecies[Math.floor(Math.random() * perSpecies.length)]!),
    );
  const randomPage = (count: number): number => 1 + Math.floor(Math.random() * lastPage(count));
  const largest = perSpecies.reduce((a, b) => (b.count > a.count ? b : a));
  const all = await envelope(baseUrl, listPath({ page: 1, page_size: PAGE_SIZE }));
  const sample = listPath({ page: 1, page_size: PAGE_SIZE, species: largest.species });
  return {
    list: draw((s) => listPath({ page: randomPage(s.count), page_size: PAGE_SIZE, species: s.species })),
    search: draw((s) =>
      listPath({
        page: randomPage(s.matching),
        page_size: PAGE_SIZE,
        species: s.species,
        search: SEARCH_WORD,
      }),
    ),
    vocabulary: searchVocabulary(all.count).map((search) =>
      listPath({ page: 1, page_size: PAGE_SIZE, search }),
    ),
    facets: draw((s) =>
      listPath({ page: randomPage(s.count), page_size: PAGE_SIZE, species: s.species, facets: FACETS }),
    ),
    deepSpecies: listPath({ page: lastPage(largest.count), page_size: PAGE_SIZE, species: largest.species }),
    deepAll: listPath({ page: lastPage(all.count), page_size: PAGE_SIZE }),
    samplePage: await (await fetch(`${baseUrl}${sample}`)).json(),
    facetsAnswered: 'facets' in (await envelope(baseUrl, `${sample}&facets=${FACETS}`)),
  };
}
