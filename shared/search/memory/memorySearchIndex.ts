import type { Pool } from 'pg';
import { cancellableQuery } from '#shared/infra/postgres/cancellableQuery';
import { FreshRun } from '#shared/runtime/freshRun';
import type { Logger } from '#shared/logging/logger';
import { READ_MODEL_SCHEMA } from '#shared/projections/projection';
import { WORD_TEXT, tsQueryExpression } from '#shared/search/postgres/searchQuerySql';
import { assertValidPage } from '#shared/search/searchPage';
import type { QueryOptions, SearchQuery, SearchReader, SearchResult } from '#shared/search/searchIndex';
import { parseSearchText, searchWords, type SearchText } from '#shared/search/searchText';
import { isVisibility } from '#shared/domain/brains/visibility';
import { MemoryDocuments, type MemoryDocument } from './memoryDocuments';
import { searchMemory, type Ranking, type TextAnalysis } from './memorySearch';
import { entryContribution, tsRank, wordEntryPos } from './tsRank';
import { wordSimilarity } from './wordSimilarity';

export interface MemorySearchIndexOptions {
  /** The read-model pool (the caller's; never ended here). */
  readonly pool: Pool;
  /** What answers whatever this index does not: no text, an order by name, before the first load. */
  readonly fallback: SearchReader;
  readonly logger: Logger;
  /** The search projection's name and its documents and words views. */
  readonly projection?: string;
  readonly documentsView?: string;
  readonly wordsView?: string;
  /** Documents read per statement while loading (and at most per catch-up statement). */
  readonly pageSize?: number;
  /**
   * Dead slots (each update or removal leaves one) tolerated before a compaction, which also waits
   * for them to be an eighth of the live ones.
   */
  readonly compactAfterDead?: number;
}

/** What the index has done, for tests and the bench. */
export interface MemorySearchStats {
  readonly inMemory: number;
  readonly delegated: number;
  readonly loads: number;
  readonly compactions: number;
}

/** A position in the event store's order, as the checkpoints and the documents keep it. */
interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

const RANKING: Ranking = {
  contribution: (weights) => entryContribution(weights.map((weight) => wordEntryPos(0, weight))),
  rank: (vector, operands) =>
    tsRank(
      vector,
      operands.map((lexeme) => ({ lexeme, prefix: true })),
    ),
  similarity: (text, nameLower) => wordSimilarity(text, nameLower),
};

/** The columns a document is read with (MemoryDocument). */
const DOCUMENT_SELECT = `d.brain_id, d.removed, d.verified, d.species_id, d.atlas_id, d.category_id, d.uploader_id,
  (extract(epoch FROM d.date_uploaded) * 1000000)::float8 AS date_micros,
  (extract(epoch FROM d.embargo_until) * 1000000)::float8 AS embargo_micros,
  d.visibility, d.readable_id, lower(coalesce(d.name, '')) AS name_lower,
  coalesce(char_length(d.name), 0) AS name_chars, d.name_words, d.search_vector::text AS vector, d.readers,
  d.position_commit::text AS position_commit, d.position_prepare::text AS position_prepare`;

interface DocumentRow {
  brain_id: number;
  removed: boolean;
  verified: boolean | null;
  species_id: number | null;
  atlas_id: number | null;
  category_id: number | null;
  uploader_id: number | null;
  date_micros: number | null;
  embargo_micros: number | null;
  visibility: string | null;
  readable_id: string | null;
  name_lower: string;
  name_chars: number;
  name_words: string[] | null;
  vector: string | null;
  readers: number[] | null;
  position_commit: string;
  position_prepare: string;
}

interface CheckpointRow {
  version: number;
  commit_position: string;
  prepare_position: string;
}

/**
 * The search projection's documents held in this process (one copy per query API), fed from the
 * projection's tables: loaded at start, then brought up to the projection's checkpoint before
 * every text search (one indexed statement reading the documents written since), so a write
 * acknowledged anywhere is found at once, as with the PostgreSQL statement. A text search is then
 * answered here without visiting every match in the database: its matches come from posting lists,
 * its total and facets are counted with arrays, and a page is the top of a heap. PostgreSQL still
 * analyses the text against the projection's dictionaries (its lexemes, the name words it
 * contains and those like it: one small statement), so the matches are exactly the statement's.
 * Anything else (no text, an order by name or readable_id, a text whose query PostgreSQL would
 * parse otherwise, before the first load) goes to `fallback`.
 */
export class MemorySearchIndex implements SearchReader {
  private readonly pool: Pool;
  private readonly fallback: SearchReader;
  private readonly logger: Logger;
  private readonly projection: string;
  private readonly documentsView: string;
  private readonly wordsView: string;
  private readonly pageSize: number;
  private readonly compactAfterDead: number;
  private counts = { inMemory: 0, delegated: 0, loads: 0, compactions: 0 };
  private documents: MemoryDocuments | undefined;
  private version: number | undefined;
  private position: Position | undefined;
  private loading: Promise<void> | undefined;
  private readonly catchUps = new FreshRun(() => this.catchUp());
  private closed = false;

  constructor(options: MemorySearchIndexOptions) {
    this.pool = options.pool;
    this.fallback = options.fallback;
    this.logger = options.logger;
    this.projection = options.projection ?? 'search';
    this.documentsView = options.documentsView ?? 'public.brain_search';
    this.wordsView = options.wordsView ?? 'public.brain_search_words';
    this.pageSize = options.pageSize ?? 5000;
    this.compactAfterDead = options.compactAfterDead ?? 10_000;
  }

  stats(): MemorySearchStats {
    return { ...this.counts };
  }

  /** Starts loading (in the background; searches go to the fallback until it is done). */
  start(): void {
    this.ensureLoading();
  }

  /** Resolves once a load started now (or running) has ended, loaded or not. */
  async loaded(): Promise<void> {
    this.ensureLoading();
    await this.loading;
  }

  close(): void {
    this.closed = true;
  }

  /** How many documents are held, and whether they are loaded (for health and the bench). */
  get size(): number | undefined {
    return this.documents?.liveCount;
  }

  async query(query: SearchQuery, options?: QueryOptions): Promise<SearchResult> {
    assertValidPage(query);
    const search = parseSearchText(query.text);
    if (!search || !this.answers(query)) return this.delegate(query, options);
    this.ensureLoading();
    if (!this.documents) return this.delegate(query, options);
    // A text of letters is analysed here, against the documents once caught up; any other by
    // PostgreSQL, which does not depend on them: both round trips at once.
    const inMemory = LETTERS_ONLY.test(search.text);
    const [analysed] = await Promise.all([
      inMemory ? undefined : this.analyse(search, options?.signal),
      this.sync(),
    ]);
    const documents = this.documents;
    const analysis = documents && inMemory ? analyseLetters(documents, search) : analysed;
    if (!analysis || !documents) return this.delegate(query, options);
    this.counts.inMemory++;
    return searchMemory(documents, analysis, query, Date.now() * 1000, RANKING);
  }

  private delegate(query: SearchQuery, options: QueryOptions | undefined): Promise<SearchResult> {
    this.counts.delegated++;
    return this.fallback.query(query, options);
  }

  /** An explicit order by name or readable_id follows the database's collation: PostgreSQL's. */
  private answers(query: SearchQuery): boolean {
    return (query.sort ?? []).every((s) => s.field === 'date_uploaded' || s.field === 'id');
  }

  private ensureLoading(): void {
    if (this.documents || this.loading || this.closed) return;
    this.loading = this.load()
      .catch((error: unknown) => {
        this.logger.warn('search index: loading into memory failed; searches use PostgreSQL meanwhile', {
          error: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => {
        this.loading = undefined;
      });
  }

  /**
   * Reads every live document page by page (by brain id, no long transaction), from the
   * checkpoint read first: whatever is written meanwhile has a later position, and the first
   * catch-up reads it again.
   */
  private async load(): Promise<void> {
    const started = performance.now();
    const checkpoint = await this.readCheckpoint();
    if (!checkpoint) return;
    const documents = new MemoryDocuments();
    let after = 0;
    for (;;) {
      if (this.closed) return;
      const { rows } = await this.pool.query<DocumentRow>({
        name: `memorySearchLoad:${this.documentsView}`,
        text: `SELECT ${DOCUMENT_SELECT} FROM ${this.documentsView} d
                WHERE NOT d.removed AND d.brain_id > $1 ORDER BY d.brain_id LIMIT $2`,
        values: [after, this.pageSize],
      });
      for (const row of rows) documents.put(documentOf(row));
      if (rows.length < this.pageSize) break;
      after = rows[rows.length - 1]!.brain_id;
    }
    this.documents = documents;
    this.counts.loads++;
    this.version = checkpoint.version;
    this.position = checkpoint.position;
    this.logger.info('search index: loaded into memory', {
      documents: documents.liveCount,
      lexemes: documents.lexemes.length,
      words: documents.words.length,
      ms: Math.round(performance.now() - started),
      heapMb: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    });
  }

  private async readCheckpoint(): Promise<{ version: number; position: Position } | undefined> {
    const { rows } = await this.pool.query<CheckpointRow>(
      `SELECT version, commit_position::text, prepare_position::text
         FROM ${READ_MODEL_SCHEMA}.projection_checkpoints WHERE projection = $1 AND status = 'live'`,
      [this.projection],
    );
    const row = rows[0];
    return row && { version: row.version, position: positionOf(row.commit_position, row.prepare_position) };
  }

  /**
   * Brings the documents up to the projection's checkpoint as committed now. Asked while one
   * catch-up runs, it waits for the next one (which starts after the ask, so it covers every write
   * committed before it); askers share them.
   */
  private sync(): Promise<void> {
    return this.catchUps.ask();
  }

  /**
   * One statement: the live checkpoint and the documents written after this index's position (a
   * snapshot: they are those the checkpoint covers). Another version gone live (a rebuild swapped
   * in) means loading again; meanwhile the fallback answers.
   */
  private async catchUp(): Promise<void> {
    for (;;) {
      const documents = this.documents;
      const from = this.position;
      if (!documents || !from) return;
      const { rows } = await this.pool.query<CheckpointRow & Partial<DocumentRow>>({
        name: `memorySearchCatchUp:${this.documentsView}`,
        text: `SELECT c.version, c.commit_position::text, c.prepare_position::text, d.*
                 FROM ${READ_MODEL_SCHEMA}.projection_checkpoints c
                 LEFT JOIN LATERAL (
                   SELECT ${DOCUMENT_SELECT} FROM ${this.documentsView} d
                    WHERE (d.position_commit, d.position_prepare) > ($2::bigint, $3::bigint)
                    ORDER BY d.position_commit, d.position_prepare LIMIT $4) d ON true
                WHERE c.projection = $1 AND c.status = 'live'`,
        values: [this.projection, from.commit.toString(), from.prepare.toString(), this.pageSize],
      });
      const first = rows[0];
      if (this.documents !== documents) return;
      if (!first || first.version !== this.version) {
        this.documents = undefined;
        this.position = undefined;
        this.ensureLoading();
        return;
      }
      const changed = rows.filter((row): row is CheckpointRow & DocumentRow => row.brain_id != null);
      for (const row of changed)
        if (row.removed) documents.remove(row.brain_id);
        else documents.put(documentOf(row));
      if (documents.deadCount > Math.max(this.compactAfterDead, documents.liveCount / 8)) {
        documents.compact();
        this.counts.compactions++;
      }
      if (changed.length < this.pageSize) {
        this.position = positionOf(first.commit_position, first.prepare_position);
        return;
      }
      const last = changed[changed.length - 1]!;
      this.position = positionOf(last.position_commit, last.position_prepare);
    }
  }

  /**
   * What searchSql's first CTE computes of the text, by PostgreSQL over the projection's own
   * dictionaries: its lexemes (q.tsq), lower() and length, the name words containing it and those
   * like each of its words. Undefined when q.tsq is not the plain AND of the lexemes as prefixes
   * (to_tsquery parses some tokens again, a hyphenated word into a phrase): PostgreSQL answers those.
   */
  private async analyse(
    search: SearchText,
    signal: AbortSignal | undefined,
  ): Promise<TextAnalysis | undefined> {
    const words = searchWords(search.text);
    const values: unknown[] = [search.text, ...words];
    const typoColumns = words.map(
      (_, i) => `ARRAY(SELECT w.word FROM ${this.wordsView} w WHERE w.word %> $${i + 2}) AS typo${i}`,
    );
    const substring = WORD_TEXT.test(search.text)
      ? `ARRAY(SELECT w.word FROM ${this.wordsView} w WHERE w.word LIKE '%' || lower($1) || '%')`
      : 'NULL::text[]';
    const { rows } = await cancellableQuery<AnalysisRow>(
      this.pool,
      {
        text: `SELECT tsvector_to_array(to_tsvector('simple', $1)) AS lexemes, (${tsQueryExpression('$1')})::text AS tsq,
                      lower($1) AS text_lower, char_length($1) AS text_chars,
                      ${[`${substring} AS substring_words`, ...typoColumns].join(', ')}`,
        values,
      },
      signal,
    );
    const row = rows[0];
    if (!row) return undefined;
    const operands = row.lexemes;
    const plain = operands.every((lexeme) => !/['\\]/.test(lexeme));
    const expected = operands.map((lexeme) => `'${lexeme}':*`).join(' & ');
    if (!plain || (row.tsq ?? '') !== expected) return undefined;
    return {
      text: search.text,
      numericId: search.numericId,
      textLower: row.text_lower,
      textChars: row.text_chars,
      operands,
      substringWords: row.substring_words ?? undefined,
      typoWords: words.map((_, i) => row[`typo${i}`] ?? []),
    };
  }
}

/**
 * Texts whose analysis is done in memory: ASCII letters and spaces. PostgreSQL's parser makes each
 * run of letters an asciiword and the 'simple' dictionary lowercases it, so the lexemes are the
 * lowercased words; lower() and char_length() are JavaScript's for ASCII; and no word of digits
 * can contain such a text or share a trigram with its words (memoryDocuments letterWordsContaining,
 * wordsLike). Held to PostgreSQL's own analysis by the equivalence test.
 */
const LETTERS_ONLY = /^[A-Za-z ]{1,1000}$/;

function analyseLetters(documents: MemoryDocuments, search: SearchText): TextAnalysis {
  const textLower = search.text.toLowerCase();
  const words = searchWords(search.text);
  return {
    text: search.text,
    numericId: undefined,
    textLower,
    textChars: search.text.length,
    operands: [...new Set(textLower.split(' ').filter(Boolean))].sort(),
    substringWords: WORD_TEXT.test(search.text) ? documents.letterWordsContaining(textLower) : undefined,
    typoWords: words.map((word) => documents.wordsLike(word)),
  };
}

interface AnalysisRow {
  lexemes: string[];
  tsq: string | null;
  text_lower: string;
  text_chars: number;
  substring_words: string[] | null;
  [typo: `typo${number}`]: string[];
}

const positionOf = (commit: string, prepare: string): Position => ({
  commit: BigInt(commit),
  prepare: BigInt(prepare),
});

function documentOf(row: DocumentRow): MemoryDocument {
  return {
    brainId: row.brain_id,
    verified: row.verified,
    speciesId: row.species_id,
    atlasId: row.atlas_id,
    categoryId: row.category_id,
    uploaderId: row.uploader_id,
    dateMicros: row.date_micros,
    embargoMicros: row.embargo_micros,
    visibility: isVisibility(row.visibility) ? row.visibility : null,
    readableId: row.readable_id,
    nameLower: row.name_lower,
    nameChars: row.name_chars,
    nameWords: row.name_words ?? [],
    vectorText: row.vector ?? '',
    readers: row.readers ?? [],
  };
}
