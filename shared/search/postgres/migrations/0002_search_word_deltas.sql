-- The dictionary of the names' words (typo and substring search look them up, searchQuerySql.ts):
-- each distinct word of the live documents' names with its number of occurrences, kept by the
-- statement-level triggers of every generation's documents table, which name their words table as
-- argument (TG_ARGV[0]). Deltas are added in word order, like the counts. The dictionary holds
-- exactly the live documents' words (a rebuild compares equal row for row), so a word no document
-- has any more is deleted, by the statement after the one that brought its count to zero (a
-- statement cannot see its own update of a row).
CREATE OR REPLACE FUNCTION rm.search_word_deltas() RETURNS trigger LANGUAGE plpgsql AS $function$
DECLARE
  unused text[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format($sql$
      WITH changed AS (
        INSERT INTO %s AS t (word, n)
        SELECT v, sum(delta) FROM (
          SELECT v, 1 AS delta FROM new_rows r CROSS JOIN unnest(r.name_words) AS v
           WHERE NOT r.removed AND v <> ''
        ) d
        GROUP BY v HAVING sum(delta) <> 0 ORDER BY v
        ON CONFLICT (word) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.word, t.n)
      SELECT coalesce(array_agg(word), '{}') FROM changed WHERE n = 0
    $sql$, TG_ARGV[0]) INTO unused;
  ELSIF TG_OP = 'UPDATE' THEN
    EXECUTE format($sql$
      WITH changed AS (
        INSERT INTO %s AS t (word, n)
        SELECT v, sum(delta) FROM (
          SELECT v, -1 AS delta FROM old_rows r CROSS JOIN unnest(r.name_words) AS v
           WHERE NOT r.removed AND v <> ''
          UNION ALL
          SELECT v, 1 AS delta FROM new_rows r CROSS JOIN unnest(r.name_words) AS v
           WHERE NOT r.removed AND v <> ''
        ) d
        GROUP BY v HAVING sum(delta) <> 0 ORDER BY v
        ON CONFLICT (word) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.word, t.n)
      SELECT coalesce(array_agg(word), '{}') FROM changed WHERE n = 0
    $sql$, TG_ARGV[0]) INTO unused;
  ELSE
    EXECUTE format($sql$
      WITH changed AS (
        INSERT INTO %s AS t (word, n)
        SELECT v, sum(delta) FROM (
          SELECT v, -1 AS delta FROM old_rows r CROSS JOIN unnest(r.name_words) AS v
           WHERE NOT r.removed AND v <> ''
        ) d
        GROUP BY v HAVING sum(delta) <> 0 ORDER BY v
        ON CONFLICT (word) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.word, t.n)
      SELECT coalesce(array_agg(word), '{}') FROM changed WHERE n = 0
    $sql$, TG_ARGV[0]) INTO unused;
  END IF;
  IF cardinality(unused) > 0 THEN
    EXECUTE format($sql$DELETE FROM %s WHERE word = ANY($1) AND n = 0$sql$, TG_ARGV[0]) USING unused;
  END IF;
  RETURN NULL;
END
$function$;
