-- The dictionary of the full-text lexemes (a word prefix is expanded to the lexemes it starts,
-- searchQuerySql.ts): each distinct lexeme of the live documents with its number of occurrences,
-- kept like the words' dictionary (0002_search_word_deltas.sql) by the triggers of every
-- generation's documents table, which name their lexemes table as argument (TG_ARGV[0]).
CREATE OR REPLACE FUNCTION rm.search_lexeme_deltas() RETURNS trigger LANGUAGE plpgsql AS $function$
DECLARE
  unused text[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format($sql$
      WITH changed AS (
        INSERT INTO %s AS t (lexeme, n)
        SELECT v, sum(delta) FROM (
          SELECT v, 1 AS delta FROM new_rows r CROSS JOIN unnest(tsvector_to_array(r.search_vector)) AS v
           WHERE NOT r.removed AND v <> ''
        ) d
        GROUP BY v HAVING sum(delta) <> 0 ORDER BY v
        ON CONFLICT (lexeme) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.lexeme, t.n)
      SELECT coalesce(array_agg(lexeme), '{}') FROM changed WHERE n = 0
    $sql$, TG_ARGV[0]) INTO unused;
  ELSIF TG_OP = 'UPDATE' THEN
    EXECUTE format($sql$
      WITH changed AS (
        INSERT INTO %s AS t (lexeme, n)
        SELECT v, sum(delta) FROM (
          SELECT v, -1 AS delta FROM old_rows r CROSS JOIN unnest(tsvector_to_array(r.search_vector)) AS v
           WHERE NOT r.removed AND v <> ''
          UNION ALL
          SELECT v, 1 AS delta FROM new_rows r CROSS JOIN unnest(tsvector_to_array(r.search_vector)) AS v
           WHERE NOT r.removed AND v <> ''
        ) d
        GROUP BY v HAVING sum(delta) <> 0 ORDER BY v
        ON CONFLICT (lexeme) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.lexeme, t.n)
      SELECT coalesce(array_agg(lexeme), '{}') FROM changed WHERE n = 0
    $sql$, TG_ARGV[0]) INTO unused;
  ELSE
    EXECUTE format($sql$
      WITH changed AS (
        INSERT INTO %s AS t (lexeme, n)
        SELECT v, sum(delta) FROM (
          SELECT v, -1 AS delta FROM old_rows r CROSS JOIN unnest(tsvector_to_array(r.search_vector)) AS v
           WHERE NOT r.removed AND v <> ''
        ) d
        GROUP BY v HAVING sum(delta) <> 0 ORDER BY v
        ON CONFLICT (lexeme) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.lexeme, t.n)
      SELECT coalesce(array_agg(lexeme), '{}') FROM changed WHERE n = 0
    $sql$, TG_ARGV[0]) INTO unused;
  END IF;
  IF cardinality(unused) > 0 THEN
    EXECUTE format($sql$DELETE FROM %s WHERE lexeme = ANY($1) AND n = 0$sql$, TG_ARGV[0]) USING unused;
  END IF;
  RETURN NULL;
END
$function$;
