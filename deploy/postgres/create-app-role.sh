#!/bin/sh
# Runs once, when the postgres container initialises an empty data directory
# (/docker-entrypoint-initdb.d). Creates the role the catalogue services connect as, so they do not
# use the superuser: it may connect, create its own schemas (read models, rate-limit counters,
# idempotency records) and temporary tables, and nothing else. Migrations run as the database owner
# (MIGRATION_DATABASE_URL), which also grants this role what it needs on the event store schema when
# PostgreSQL holds the events (docs/security.md, "The database").
set -eu
: "${CATALOGUE_APP_PASSWORD:?set CATALOGUE_APP_PASSWORD}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_password="$CATALOGUE_APP_PASSWORD" <<'SQL'
CREATE ROLE catalogue_app LOGIN PASSWORD :'app_password';
GRANT CONNECT, CREATE, TEMPORARY ON DATABASE :"DBNAME" TO catalogue_app;
GRANT USAGE, CREATE ON SCHEMA public TO catalogue_app;
SQL
