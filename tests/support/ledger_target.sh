# shellcheck shell=bash
# Sourced by the ledger's shell tests (issue 47, docs/ledger_postgresql.md#tests):
# the same test code on either store. The script sets $tmp (a folder of its
# own) and calls:
#   ledger_target_init STORE  sqlite, or postgresql: starts a throwaway cluster
#                             (tests/support/pg_cluster.sh start --fsync off;
#                             exits 77, skipped, without the server, or 1 when
#                             DPBUDGET_REQUIRE_POSTGRESQL=1 forbids skipping)
#   ledger_target_cleanup     removes the cluster (call it from the EXIT trap)
#   ledger_args NAME          sets the array LEDGER to the --ledger arguments
#                             of the ledger NAME: the file $tmp/NAME.ledger,
#                             or the owner's URI and --ledger-name NAME
#   ledger_sql NAME SQL       runs SQL behind dpbudget's back on ledger NAME
#                             (sqlite3 on the file; psql as the administrator)
#                             and prints its rows, one a line, columns '|'
#                             apart. In SQL, @entries and @header name the
#                             tables and @this is the condition selecting
#                             ledger NAME's rows (always true in a file).
#   ledger_copy FROM TO       a copy of ledger FROM, every row, as ledger TO
#   ledger_sql_tool           says which tool ledger_sql needs, or exits 77
#                             (skipped) without it
# Every function fails the calling script (exit 1) when the store does.
store=
pg_cluster_script=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pg_cluster.sh

ledger_target_init() {
  store=${1:?ledger_target_init: sqlite or postgresql}
  case $store in
    sqlite) ;;
    postgresql)
      local env rc
      env=$(bash "$pg_cluster_script" start --fsync off)
      rc=$?
      # 77: skipped, pg_cluster.sh said why; any other failure is a failure.
      [ "$rc" = 0 ] || exit "$rc"
      eval "$env"
      # libpq in dpbudget and psql read the passwords from here (never a
      # command line).
      export PGPASSFILE
      ;;
    *)
      echo "ledger_target: the store is sqlite or postgresql, not '$store'" >&2
      exit 2
      ;;
  esac
}

ledger_target_cleanup() {
  if [ "$store" = postgresql ] && [ -n "${PG_CLUSTER_DIR:-}" ]; then
    bash "$pg_cluster_script" remove "$PG_CLUSTER_DIR"
  fi
}

# shellcheck disable=SC2034 # LEDGER is the caller's
ledger_args() {
  if [ "$store" = sqlite ]; then
    LEDGER=(--ledger "$tmp/$1.ledger")
  else
    LEDGER=(--ledger "$PG_URI_OWNER" --ledger-name "$1")
  fi
}

ledger_sql_tool() {
  local tool=sqlite3
  [ "$store" = postgresql ] && tool=psql
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: the $tool tool is not installed" >&2
    exit 77
  fi
}

ledger_sql() {
  local name=$1 sql=$2
  if [ "$store" = sqlite ]; then
    sql=${sql//@entries/entries}
    sql=${sql//@header/header}
    sql=${sql//@this/1}
    sqlite3 "$tmp/$name.ledger" "$sql" || {
      echo "ledger_sql: sqlite3 failed on $name: $sql" >&2
      exit 1
    }
  else
    sql=${sql//@entries/dpbudget.entries}
    sql=${sql//@header/dpbudget.header}
    sql=${sql//@this/ledger = \'$name\'}
    psql -X -q -A -t -v ON_ERROR_STOP=1 "$PG_URI_ADMIN" -c "$sql" || {
      echo "ledger_sql: psql failed on $name: $sql" >&2
      exit 1
    }
  fi
}

ledger_copy() {
  if [ "$store" = sqlite ]; then
    cp "$tmp/$1.ledger" "$tmp/$2.ledger" || exit 1
  else
    # One transaction: the ledgers row first (the others refer to it).
    psql -X -q -v ON_ERROR_STOP=1 "$PG_URI_ADMIN" >/dev/null <<SQL || exit 1
BEGIN;
INSERT INTO dpbudget.ledgers (name, created_at, head_seq)
  SELECT '$2', created_at, head_seq FROM dpbudget.ledgers WHERE name = '$1';
INSERT INTO dpbudget.header (ledger, name, value)
  SELECT '$2', name, value FROM dpbudget.header WHERE ledger = '$1';
INSERT INTO dpbudget.entries (ledger, seq, kind, name, recorded_at, recorded_by, body, note,
                              prev_hash, hash)
  SELECT '$2', seq, kind, name, recorded_at, recorded_by, body, note, prev_hash, hash
  FROM dpbudget.entries WHERE ledger = '$1';
COMMIT;
SQL
  fi
}
