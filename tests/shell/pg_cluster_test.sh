#!/usr/bin/env bash
# The throwaway PostgreSQL cluster of the ledger's tests
# (tests/support/pg_cluster.sh, docs/ledger_postgresql.md#tests) does what the
# PostgreSQL store's tests will rely on: it starts with only a Unix socket, the
# owner may create a schema, the writer may insert what it is granted and the
# reader may not (a clear ERROR), a wrong or missing password is refused, no
# password is on stdout or in the process list, an immediate stop (a crash)
# loses no committed row and a restart recovers, and remove leaves nothing.
# Exit 77 (CTest: skipped) when the server is not installed; CI installs it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/../support/pg_cluster.sh
fail() {
  echo "pg_cluster_test: FAIL: $*" >&2
  exit 1
}

out=$(mktemp)
bash "$cluster" start --fsync off >"$out"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || fail "start exited $rc"
eval "$(cat "$out")"
rm -f "$out"
export PGPASSFILE
trap 'bash "$cluster" remove "$PG_CLUSTER_DIR"' EXIT
psql=(psql -X -q -A -t -v ON_ERROR_STOP=1)

# No TCP port: the server listens on the socket only.
[ "$("${psql[@]}" "$PG_URI_READER" -c "SHOW listen_addresses")" = "" ] ||
  fail "the server listens on TCP"

"${psql[@]}" "$PG_URI_OWNER" <<'SQL' || fail "the owner could not create a schema"
CREATE SCHEMA ledger_probe;
CREATE TABLE ledger_probe.t (x int);
GRANT USAGE ON SCHEMA ledger_probe TO dpb_reader, dpb_writer;
GRANT SELECT ON ledger_probe.t TO dpb_reader, dpb_writer;
GRANT INSERT ON ledger_probe.t TO dpb_writer;
SQL
"${psql[@]}" "$PG_URI_WRITER" -c "INSERT INTO ledger_probe.t VALUES (1)" ||
  fail "the writer could not insert"
err=$("${psql[@]}" "$PG_URI_READER" -c "INSERT INTO ledger_probe.t VALUES (2)" 2>&1) &&
  fail "the reader inserted"
grep -q "permission denied for table t" <<<"$err" || fail "the reader's refusal says: $err"
"${psql[@]}" "$PG_URI_WRITER" -c "CREATE TABLE ledger_probe.u (x int)" 2>/dev/null &&
  fail "the writer created a table"

# Passwords: in the pgpass file only (mode 0600), never printed.
[ "$(stat -c %a "$PGPASSFILE")" = 600 ] || fail "pgpass is not 0600"
# (grep reads each password from a pipe, not its command line, which ps shows.)
ps -eo args >"$PG_CLUSTER_DIR/ps.txt"
while IFS=: read -r _ _ _ user pw; do
  grep -rqFf <(echo "$pw") "$PG_CLUSTER_DIR"/*.log "$PG_CLUSTER_DIR/log" 2>/dev/null &&
    fail "the password of $user is in a log"
  grep -qFf <(echo "$pw") "$PG_CLUSTER_DIR/ps.txt" &&
    fail "the password of $user is in the process list"
done <"$PGPASSFILE"
PGPASSFILE=/dev/null "${psql[@]}" -w "$PG_URI_READER" -c "SELECT 1" 2>/dev/null &&
  fail "a login without a password was let in"
PGPASSFILE=/dev/null PGPASSWORD=wrong "${psql[@]}" -w "$PG_URI_READER" -c "SELECT 1" 2>/dev/null &&
  fail "a wrong password was let in"

# A crash: committed rows survive, an open transaction is gone, recovery works.
# (Only the superuser sees another role's query in pg_stat_activity.)
("${psql[@]}" "$PG_URI_WRITER" -c "BEGIN; INSERT INTO ledger_probe.t VALUES (99);
  SELECT pg_sleep(30); COMMIT;" >/dev/null 2>&1 &)
for _ in $(seq 50); do
  [ "$("${psql[@]}" "$PG_URI_ADMIN" -c "SELECT count(*) FROM pg_stat_activity
    WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()")" = 1 ] && break
  sleep 0.1
done
bash "$cluster" stop "$PG_CLUSTER_DIR" immediate || fail "stop -m immediate failed"
"${psql[@]}" "$PG_URI_READER" -c "SELECT 1" 2>/dev/null && fail "the server still answers"
bash "$cluster" restart "$PG_CLUSTER_DIR" || fail "restart failed"
[ "$("${psql[@]}" "$PG_URI_READER" -c "SELECT string_agg(x::text, ',') FROM ledger_probe.t")" = 1 ] ||
  fail "after the crash the table is not (1)"

dir=$PG_CLUSTER_DIR
trap - EXIT
bash "$cluster" remove "$dir" || fail "remove failed"
[ ! -e "$dir" ] || fail "remove left $dir"
echo "pg_cluster_test: ok"
