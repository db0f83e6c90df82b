import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type BrainA, type Facets, type Page, api, localPath } from '../api';
import { ApiImage } from '../components';
import { navigate, useLocation } from '../router';

const PAGE_SIZE = 20;
/**
 * Searching as you type is debounced on both edges (lodash's `leading` and `trailing`): a key after
 * a pause this long asks at once, and the keys that follow it within this long of each other (fast
 * typing, a paste) are one question, asked this long after the last of them. Typing at a person's
 * pace (a key every 100–200 ms) asks once a key either way; asking at the first key rather than
 * this long after it takes the wait out of every answer. Each new question aborts the one before it
 * (the server then stops its statement), and an answer is shown only if it is the newest question's.
 */
const SEARCH_DEBOUNCE_MS = 80;
/** Typing within this long of the last search replaces its history entry (back skips the keystrokes). */
const TYPING_BURST_MS = 1500;
const FIRST_RESULT_MARK = 'catalogue:first-result';
/**
 * For the tests and the bench: a measure per search text whose results were painted, from the
 * keystroke that made that text (performance.measure, name below, `detail` the text).
 */
export const SEARCH_PAINT_MEASURE = 'catalogue:keystroke-to-paint';
const keystrokeAt = new Map<string, number>();
const FILTERS = ['species', 'atlas', 'category', 'verified'] as const;
type Filter = (typeof FILTERS)[number];
const GROUP_NAMES: Record<Filter, string> = {
  species: 'Species',
  atlas: 'Atlas',
  category: 'Category',
  verified: 'Verified',
};

let speciesNames: Promise<Map<string, string>> | undefined;
/** Species id -> scientific name (the list filter takes the scientific name; facets give ids). */
function scientificNames(): Promise<Map<string, string>> {
  speciesNames ??= api<{ id: number; scientific_name: string }[]>('/api/species/')
    .then((all) => new Map(all.map((s) => [String(s.id), s.scientific_name])))
    .catch((error: unknown) => {
      speciesNames = undefined;
      throw error;
    });
  return speciesNames;
}

/** The API query of a page URL: search, filters and page, with the facets of the same selection. */
async function apiQuery(params: URLSearchParams): Promise<string> {
  const query = new URLSearchParams({
    shape: 'a',
    page: params.get('page') ?? '1',
    page_size: String(PAGE_SIZE),
  });
  query.set('facets', FILTERS.join(','));
  const q = params.get('q')?.trim();
  if (q) query.set('search', q);
  for (const filter of ['atlas', 'category', 'verified', 'uploader'] as const) {
    const value = params.get(filter);
    if (value) query.set(filter, value);
  }
  const species = params.get('species');
  if (species) query.set('species', (await scientificNames()).get(species) ?? `unknown-${species}`);
  return `/api/brains/?${query.toString()}`;
}

function withParams(params: URLSearchParams, changes: Record<string, string | null>): string {
  const next = new URLSearchParams(params);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === '') next.delete(key);
    else next.set(key, value);
  }
  const search = next.toString();
  return search ? `/?${search}` : '/';
}

type State =
  | { kind: 'loading' }
  | { kind: 'error'; message: string }
  | { kind: 'ready'; page: Page<BrainA>; forSearch: string };

export function BrowsePage() {
  const { params } = useLocation();
  const urlQuery = params.get('q') ?? '';
  const [text, setText] = useState(urlQuery);
  const [state, setState] = useState<State>({ kind: 'loading' });
  // On a narrow screen the facets are behind a button (CSS shows the button there only).
  const [filtersOpen, setFiltersOpen] = useState(false);
  const latest = useRef(0);
  /** The debounce's timer while keys come within SEARCH_DEBOUNCE_MS, and a text typed since its last question. */
  const debounce = useRef<{ timer: ReturnType<typeof setTimeout>; unasked?: string } | undefined>(undefined);
  const stopDebounce = () => {
    clearTimeout(debounce.current?.timer);
    debounce.current = undefined;
  };
  const lastTyped = useRef(0);
  const search = params.toString();

  /**
   * The searches the box itself put in the URL that have not arrived yet, oldest first: their
   * arrival must not undo keys typed since. Several can be on the way: one typed, then the box
   * cleared before the first one rendered (a busy machine), must not bring the first text back.
   */
  const typedQueries = useRef<string[]>([]);
  // Back/forward (or a link) changed the search: the box shows it.
  useEffect(() => {
    const own = typedQueries.current.indexOf(urlQuery);
    if (own >= 0) {
      typedQueries.current = typedQueries.current.slice(own + 1);
      return;
    }
    typedQueries.current = [];
    stopDebounce();
    setText(urlQuery);
  }, [urlQuery]);

  // A layout effect: the question leaves as the new URL renders, not after the next frame is painted
  // (an effect waits for that paint, up to a frame on every keystroke).
  useLayoutEffect(() => {
    document.title = urlQuery ? `“${urlQuery}” — Brain catalogue` : 'Brain catalogue';
    const request = ++latest.current;
    const abort = new AbortController();
    void (async () => {
      try {
        const page = await api<Page<BrainA>>(await apiQuery(params), { signal: abort.signal });
        // A slower, older answer never overwrites a newer one.
        if (request === latest.current) setState({ kind: 'ready', page, forSearch: search });
      } catch (error) {
        if (request !== latest.current || abort.signal.aborted) return;
        setState({ kind: 'error', message: error instanceof Error ? error.message : String(error) });
      }
    })();
    return () => abort.abort();
  }, [search]);

  // For the tests and the bench: when the first results of this page load were on screen, and
  // each typed search's results, taken after the frame that paints them. A layout effect runs as
  // the new results enter the DOM, before that frame: its requestAnimationFrame callback runs just
  // before the frame is painted and a timeout from there just after. (An effect runs only after that
  // paint already: a frame taken from there was the next one, about 17 ms late.)
  useLayoutEffect(() => {
    if (state.kind !== 'ready') return;
    const q = new URLSearchParams(state.forSearch).get('q') ?? '';
    const typed = keystrokeAt.get(q);
    keystrokeAt.delete(q);
    requestAnimationFrame(() =>
      setTimeout(() => {
        if (performance.getEntriesByName(FIRST_RESULT_MARK).length === 0) performance.mark(FIRST_RESULT_MARK);
        if (typed !== undefined) performance.measure(SEARCH_PAINT_MEASURE, { start: typed, detail: q });
      }, 0),
    );
  }, [state]);

  const onInput = (value: string) => {
    const now = performance.now();
    keystrokeAt.delete(value.trim());
    keystrokeAt.set(value.trim(), now);
    // Texts whose answers never came (superseded) are forgotten, oldest first.
    if (keystrokeAt.size > 50) keystrokeAt.delete(keystrokeAt.keys().next().value!);
    setText(value);
    const ask = (typed: string) => {
      // One history entry per search typed, not per keystroke.
      const replace = performance.now() - lastTyped.current < TYPING_BURST_MS;
      lastTyped.current = performance.now();
      // A text the URL holds already changes nothing there: nothing will arrive for it.
      const inUrl = new URLSearchParams(window.location.search).get('q') ?? '';
      if (typed.trim() !== inUrl) typedQueries.current.push(typed.trim());
      navigate(withParams(params, { q: typed.trim(), page: null }), { replace });
    };
    const burst = debounce.current;
    clearTimeout(burst?.timer);
    if (!burst) ask(value);
    const next: { timer: ReturnType<typeof setTimeout>; unasked?: string } = {
      timer: setTimeout(() => {
        debounce.current = undefined;
        if (next.unasked !== undefined) ask(next.unasked);
      }, SEARCH_DEBOUNCE_MS),
      unasked: burst ? value : undefined,
    };
    debounce.current = next;
  };

  const page = state.kind === 'ready' ? state.page : undefined;
  const pageNumber = Number(params.get('page') ?? '1') || 1;
  const pages = page ? Math.max(1, Math.ceil(page.count / PAGE_SIZE)) : 1;
  return (
    <div class="browse">
      <h1 class="visually-hidden">Brains</h1>
      <form
        class="search"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          stopDebounce();
          navigate(withParams(params, { q: text.trim(), page: null }));
        }}
      >
        <input
          type="search"
          aria-label="Search brains"
          placeholder="Search brains by name, species, atlas…"
          value={text}
          onInput={(event) => onInput(event.currentTarget.value)}
          autocomplete="off"
          spellcheck={false}
        />
      </form>
      <div class="browse-body">
        <button
          type="button"
          class="secondary facets-toggle"
          aria-expanded={filtersOpen}
          aria-controls="facets"
          onClick={() => setFiltersOpen(!filtersOpen)}
        >
          {filtersOpen ? 'Hide filters' : 'Filters'}
          {activeFilters(params) > 0 && ` (${activeFilters(params)} on)`}
        </button>
        <aside id="facets" class={filtersOpen ? 'facets open' : 'facets'} aria-label="Filters">
          {page?.facets && <FacetGroups facets={page.facets} params={params} />}
        </aside>
        <section class="results" aria-label="Results" aria-busy={state.kind === 'loading'}>
          <p class="count" role="status">
            {state.kind === 'loading' && 'Loading…'}
            {state.kind === 'error' && <span class="error">Could not load brains: {state.message}</span>}
            {page &&
              `${page.count} ${page.count === 1 ? 'brain' : 'brains'}${urlQuery ? ` matching “${urlQuery}”` : ''}`}
          </p>
          {page && (
            <ul class="cards">
              {page.results.map((brain) => (
                <BrainCard key={brain.id} brain={brain} />
              ))}
            </ul>
          )}
          {page && pages > 1 && (
            <nav class="pager" aria-label="Pages">
              {pageNumber > 1 ? (
                <a href={withParams(params, { page: pageNumber === 2 ? null : String(pageNumber - 1) })}>
                  Previous
                </a>
              ) : (
                <span />
              )}
              <span>
                Page {pageNumber} of {pages}
              </span>
              {pageNumber < pages ? (
                <a href={withParams(params, { page: String(pageNumber + 1) })}>Next</a>
              ) : (
                <span />
              )}
            </nav>
          )}
        </section>
      </div>
    </div>
  );
}

/** How many facets the URL filters by. */
const activeFilters = (params: URLSearchParams) => FILTERS.filter((f) => params.get(f)).length;

function BrainCard({ brain }: { brain: BrainA }) {
  return (
    <li class="card">
      {brain.preview_url && brain.visibility !== 'public' ? (
        <ApiImage src={brain.preview_url} alt="" withToken />
      ) : brain.preview_url ? (
        <img
          src={localPath(brain.preview_url)}
          alt=""
          width={96}
          height={96}
          loading="lazy"
          decoding="async"
        />
      ) : (
        <div class="no-preview" aria-hidden="true" />
      )}
      <div>
        <h2>
          <a href={`/brains/${encodeURIComponent(brain.readable_id)}`}>{brain.name}</a>
        </h2>
        <p class="meta">
          <span>{brain.species ? brain.species.name : 'No species'}</span>
          {' · '}
          <span>{brain.atlas ? brain.atlas.name : 'No atlas'}</span>
          {brain.verified && <span class="badge">verified</span>}
        </p>
      </div>
    </li>
  );
}

function FacetGroups({ facets, params }: { facets: Facets; params: URLSearchParams }) {
  return (
    <>
      {FILTERS.map((filter) => {
        const selected = params.get(filter);
        const values =
          filter === 'verified'
            ? (facets.verified ?? []).map((v) => ({
                key: String(v.value),
                name: v.value ? 'verified' : 'not verified',
                count: v.count,
              }))
            : (facets[filter] ?? []).map((v) => ({
                key: String(v.id),
                name: v.name || `#${v.id}`,
                count: v.count,
              }));
        // A selected value the answer no longer counts stays, so it can be cleared.
        if (selected && !values.some((v) => v.key === selected))
          values.push({ key: selected, name: selected, count: 0 });
        if (values.length === 0) return null;
        return (
          <fieldset key={filter}>
            <legend>{GROUP_NAMES[filter]}</legend>
            {values.map((value) => (
              <label key={value.key}>
                <input
                  type="checkbox"
                  checked={selected === value.key}
                  onChange={(event) =>
                    navigate(
                      withParams(params, {
                        [filter]: event.currentTarget.checked ? value.key : null,
                        page: null,
                      }),
                    )
                  }
                />
                {` ${value.name} (${value.count})`}
              </label>
            ))}
          </fieldset>
        );
      })}
    </>
  );
}
