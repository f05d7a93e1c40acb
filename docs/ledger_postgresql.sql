-- The dpbudget ledger's schema on a PostgreSQL server, for an administrator
-- who does not let dpbudget create it (issue 47; docs/ledger_postgresql.md,
-- sections "Schema" and "Roles and GRANTs"). Run it once, in the database
-- the ledgers live in, as a role that may create schemas and roles (e.g. a
-- superuser); that role owns the schema:
--
--   psql -v ON_ERROR_STOP=1 'postgresql://ADMIN@HOST/DB' -f docs/ledger_postgresql.sql
--
-- It creates the schema dpbudget with its four tables (the tables dpbudget's
-- ledger-init would create, schema version 1) and three group roles that
-- cannot log in:
--   dpbudget_reader  ledger-status, ledger-history, ledger-verify, ledger-export
--   dpbudget_writer  the reader's rights, and ledger-add, ledger-void
--   dpbudget_init    the reader's rights, and ledger-init (a new ledger)
-- Then give them to the roles people and runners log in as, e.g.
--   GRANT dpbudget_writer TO ci_runner;
--   GRANT dpbudget_reader TO auditor;
--   GRANT dpbudget_init, dpbudget_writer TO budget_officer;
-- No role but the schema's owner may UPDATE or DELETE entries or header
-- rows: an entry, once recorded, is never changed through these roles.
-- The whole file is one transaction: it applies completely or not at all
-- (it stops at the first error, e.g. when the schema already exists).

BEGIN;

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dpbudget_reader') THEN
    CREATE ROLE dpbudget_reader NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dpbudget_writer') THEN
    CREATE ROLE dpbudget_writer NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dpbudget_init') THEN
    CREATE ROLE dpbudget_init NOLOGIN;
  END IF;
END
$$;

CREATE SCHEMA dpbudget;

-- The schema's version, as the SQLite store's user_version and application_id.
CREATE TABLE dpbudget.meta (
  key text PRIMARY KEY,
  value text NOT NULL);

-- One row per ledger; an append locks its ledger's row (FOR UPDATE) first.
CREATE TABLE dpbudget.ledgers (
  name text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  head_seq bigint NOT NULL DEFAULT 0);

-- A ledger's header: named texts (the budget and how it is read), set once.
CREATE TABLE dpbudget.header (
  ledger text NOT NULL REFERENCES dpbudget.ledgers (name),
  name text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (ledger, name));

-- The entries, chained by their hashes (computed by dpbudget, not here).
CREATE TABLE dpbudget.entries (
  ledger text NOT NULL REFERENCES dpbudget.ledgers (name),
  seq bigint NOT NULL CHECK (seq >= 1),
  kind text NOT NULL,
  name text NOT NULL,
  recorded_at text NOT NULL,
  recorded_by text NOT NULL,
  body text NOT NULL,
  note text NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  PRIMARY KEY (ledger, seq));

INSERT INTO dpbudget.meta (key, value) VALUES
  ('application', 'dpbudget-ledger'),
  ('schema_version', '1');

GRANT USAGE ON SCHEMA dpbudget TO dpbudget_reader, dpbudget_writer, dpbudget_init;
GRANT SELECT ON dpbudget.meta, dpbudget.ledgers, dpbudget.header, dpbudget.entries
  TO dpbudget_reader, dpbudget_writer, dpbudget_init;
-- ledger-add and ledger-void: the lock on the ledger's row, then the entry.
GRANT UPDATE (head_seq) ON dpbudget.ledgers TO dpbudget_writer;
GRANT INSERT ON dpbudget.entries TO dpbudget_writer;
-- ledger-init: the ledger's row and its header.
GRANT INSERT ON dpbudget.ledgers, dpbudget.header TO dpbudget_init;

COMMIT;
