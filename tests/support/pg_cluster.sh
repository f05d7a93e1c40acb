#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the ledger's tests (issue 47;
# docs/ledger_postgresql.md#tests): initdb into a fresh temporary folder, the
# server listening only on a Unix socket inside it (no TCP port), started as an
# unprivileged user, stopped and removed by the same script. Nothing outside
# the folder is touched; the Debian cluster "main" and /var/run/postgresql are
# left alone.
#
# Usage:
#   pg_cluster.sh start [--fsync off]  -> creates and starts a cluster; prints
#                                         shell assignments (below) on stdout;
#                                         --fsync off: no fsync (faster crash
#                                         recovery; a server crash still loses
#                                         nothing committed, a machine crash could)
#   pg_cluster.sh stop DIR [MODE]      -> pg_ctl stop -m MODE (fast, the default;
#                                         immediate: a crash, as a power cut
#                                         without the lost cache)
#   pg_cluster.sh restart DIR          -> starts a stopped cluster again (after
#                                         an immediate stop this is crash recovery)
#   pg_cluster.sh remove DIR           -> stops it (immediate) and deletes DIR
# The server's log is DIR/log/server.log.
#
# `start` prints, one a line, shell-quoted assignments a test can `eval`:
#   PG_CLUSTER_DIR=...      the folder (pass it to stop/restart/remove)
#   PGHOST=DIR/sock         the socket's folder (libpq's PGHOST)
#   PGPORT=5432             the socket's number (no TCP port is opened)
#   PGDATABASE=dpbudget     a database owned by dpb_owner
#   PGPASSFILE=DIR/pgpass   every role's password, mode 0600 (never printed)
#   PG_URI_OWNER=postgresql://dpb_owner@%2Ftmp%2Fdpbudget_pg.XXXXXX%2Fsock/dpbudget
#                           (the socket's folder, percent-encoded, as the host)
#   PG_URI_WRITER=...       (user dpb_writer)
#   PG_URI_READER=...       (user dpb_reader)
#   PG_URI_ADMIN=...        (user dpb_admin, the cluster's superuser)
# Roles: dpb_admin (superuser), dpb_owner (owns the database: may create the
# ledger schema), dpb_writer and dpb_reader (may log in and connect; what they
# may do in the schema is granted by whoever creates it). Every role logs in
# with a random password (scram-sha-256), kept only in PGPASSFILE.
#
# Exit 77 (CTest: skipped), with a line saying why, when the server is not
# installed (apt-get install -y postgresql-15; .ci/run installs it), unless
# DPBUDGET_REQUIRE_POSTGRESQL=1 (set by .ci/run): then that is a failure. Any other
# failure exits 1 with the server's log on stderr and leaves nothing behind.
#
# As root (CI and the developers' machines run as root), initdb refuses to
# run; the server then runs as $PG_CLUSTER_USER, else "postgres" (Debian's
# postgresql-common creates it), else "nobody", through setpriv. The folder
# is that user's; root's clients still reach the socket (mode 0777 in a 0755
# folder). As any other user, the server runs as that user.
set -euo pipefail

die() {
  echo "pg_cluster: $*" >&2
  exit 1
}

# The server's programs: $PG_BINDIR, else Debian's newest
# /usr/lib/postgresql/N/bin, else initdb on the PATH.
find_bindir() {
  if [ -n "${PG_BINDIR:-}" ]; then
    [ -x "$PG_BINDIR/initdb" ] || die "PG_BINDIR=$PG_BINDIR has no initdb"
    echo "$PG_BINDIR"
    return
  fi
  local d best
  # The glob sorts 10 before 9: take the highest version number.
  best=$(for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && echo "$d"
  done | sort -t/ -k5,5n | tail -n1)
  if [ -n "$best" ]; then
    echo "$best"
  elif command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(command -v initdb)"
  elif [ "${DPBUDGET_REQUIRE_POSTGRESQL:-0}" = 1 ]; then
    # CI sets this (.ci/run): there the server is installed, and a skip
    # would hide that the PostgreSQL store went untested.
    die "the PostgreSQL server is not installed and DPBUDGET_REQUIRE_POSTGRESQL=1 forbids skipping"
  else
    echo "SKIP: the PostgreSQL server is not installed (apt-get install -y postgresql-15;" \
      ".ci/run installs it)" >&2
    exit 77
  fi
}

# run_as_server CMD...: runs CMD as the server's user.
server_user=''
pick_user() {
  if [ "$(id -u)" != 0 ]; then
    server_user=$(id -un)
    return
  fi
  local u
  for u in "${PG_CLUSTER_USER:-}" postgres nobody; do
    [ -n "$u" ] && id -u "$u" >/dev/null 2>&1 && {
      server_user=$u
      return
    }
  done
  die "running as root, and no unprivileged user to run the server as (set PG_CLUSTER_USER)"
}
run_as_server() {
  if [ "$(id -u)" = 0 ]; then
    # No shell of the user's, no login: the same environment less HOME's
    # meaning (initdb and pg_ctl read none of it). From /, in a subshell:
    # the caller's directory may be one the user cannot enter (a clone
    # under a root-only mktemp -d), and initdb, pg_ctl and postgres each
    # complain, on stderr, when they cannot change back to it.
    (cd / && setpriv --reuid="$server_user" --regid="$(id -g "$server_user")" --init-groups \
      --inh-caps=-all -- "$@")
  else
    "$@"
  fi
}

# The socket's folder as a URI's host: every byte but [A-Za-z0-9._~-]
# percent-encoded (so "/" is %2F, and the URI needs no quoting in a shell).
uri_encode() {
  local LC_ALL=C s=$1 out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      [A-Za-z0-9._~-]) out+=$c ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  printf '%s' "$out"
}

# A random password: 32 hex digits (no character a URI, a pgpass line or SQL
# would have to quote).
password() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

server_options() {  # the options every start passes (the socket, no TCP)
  local dir=$1
  echo "-k $dir/sock -c listen_addresses= -c unix_socket_permissions=0777 -c max_connections=200 $(cat "$dir/extra_options")"
}

start_server() {  # start_server DIR BINDIR: pg_ctl start, waiting until it accepts connections
  local dir=$1 bin=$2
  if ! run_as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/log/server.log" -w -t 60 \
    -o "$(server_options "$dir")" start >"$dir/pg_ctl.out" 2>&1; then
    cat "$dir/pg_ctl.out" "$dir/log/server.log" >&2 || true
    return 1
  fi
}

cmd_start() {
  local fsync=on
  while [ $# -gt 0 ]; do
    case $1 in
      --fsync) fsync=${2:?--fsync on|off}; shift 2 ;;
      *) die "start: unknown option $1" ;;
    esac
  done
  local bin
  bin=$(find_bindir)
  pick_user
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/dpbudget_pg.XXXXXX")
  # From here on a failure removes what was made.
  trap 'rc=$?; if [ $rc != 0 ]; then run_as_server "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; fi' EXIT
  touch "$dir/.dpbudget_pg_cluster"  # remove refuses a folder without it
  mkdir "$dir/data" "$dir/sock" "$dir/log"
  chmod 0755 "$dir" "$dir/sock" "$dir/log"
  chmod 0700 "$dir/data"
  # fsync=off only: a commit still reaches the kernel before it returns
  # (synchronous_commit stays on), so a crash of the server (stop -m immediate)
  # loses nothing committed; only a crash of the machine could.
  [ "$fsync" = off ] && echo "-c fsync=off" \
    >"$dir/extra_options" || : >"$dir/extra_options"
  [ "$(id -u)" = 0 ] && chown "$server_user:" "$dir/data" "$dir/sock" "$dir/log"

  local admin_pw owner_pw writer_pw reader_pw
  admin_pw=$(password) owner_pw=$(password) writer_pw=$(password) reader_pw=$(password)
  # initdb reads the superuser's password from a file the server's user can read.
  install -m 0600 /dev/null "$dir/data.pw"
  [ "$(id -u)" = 0 ] && chown "$server_user:" "$dir/data.pw"
  printf '%s\n' "$admin_pw" >"$dir/data.pw"
  if ! run_as_server "$bin/initdb" -D "$dir/data" -U dpb_admin --pwfile="$dir/data.pw" \
    --auth=scram-sha-256 -E UTF8 --locale=C.UTF-8 --no-instructions --no-sync \
    >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    die "initdb failed"
  fi
  rm -f "$dir/data.pw"
  # Only the socket: no host lines at all.
  printf 'local all all scram-sha-256\n' >"$dir/data/pg_hba.conf"

  local sock=$dir/sock
  install -m 0600 /dev/null "$dir/pgpass"
  {
    echo "$sock:5432:*:dpb_admin:$admin_pw"
    echo "$sock:5432:*:dpb_owner:$owner_pw"
    echo "$sock:5432:*:dpb_writer:$writer_pw"
    echo "$sock:5432:*:dpb_reader:$reader_pw"
  } >"$dir/pgpass"

  start_server "$dir" "$bin" || die "the server did not start"
  # The roles and the database; passwords go in on psql's standard input, never
  # on a command line.
  if ! PGPASSFILE=$dir/pgpass "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -U dpb_admin \
    -d postgres >"$dir/setup.log" 2>&1 <<SQL; then
CREATE ROLE dpb_owner LOGIN PASSWORD '$owner_pw';
CREATE ROLE dpb_writer LOGIN PASSWORD '$writer_pw';
CREATE ROLE dpb_reader LOGIN PASSWORD '$reader_pw';
CREATE DATABASE dpbudget OWNER dpb_owner;
REVOKE ALL ON DATABASE dpbudget FROM PUBLIC;
GRANT CONNECT ON DATABASE dpbudget TO dpb_writer, dpb_reader;
\c dpbudget
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
SQL
    cat "$dir/setup.log" >&2
    die "creating the roles failed"
  fi
  trap - EXIT
  # Each value shell-quoted (a URI holds '&'), so that `eval` reads it whole.
  printf 'PG_CLUSTER_DIR=%q\n' "$dir"
  printf 'PGHOST=%q\n' "$sock"
  printf 'PGPORT=5432\n'
  printf 'PGDATABASE=dpbudget\n'
  printf 'PGPASSFILE=%q\n' "$dir/pgpass"
  local u
  for u in admin owner writer reader; do
    printf 'PG_URI_%s=%q\n' "${u^^}" "postgresql://dpb_$u@$(uri_encode "$sock")/dpbudget"
  done
}

check_dir() {  # a folder this script made, or exit 1
  [ -n "${1:-}" ] && [ -f "$1/.dpbudget_pg_cluster" ] || die "${1:-(none)}: not a cluster made by pg_cluster.sh start"
}

cmd_stop() {
  check_dir "${1:-}"
  local dir=$1 mode=${2:-fast} bin
  bin=$(find_bindir)
  pick_user
  run_as_server "$bin/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop >/dev/null
}

cmd_restart() {
  check_dir "${1:-}"
  local dir=$1 bin
  bin=$(find_bindir)
  pick_user
  start_server "$dir" "$bin" || die "the server did not start again"
}

cmd_remove() {
  check_dir "${1:-}"
  local dir=$1 bin
  bin=$(find_bindir)
  pick_user
  # Stopped already is fine; a server that will not stop is an error (its
  # files would be deleted under it).
  if run_as_server "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    run_as_server "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 60 stop >/dev/null ||
      die "$dir: the server did not stop"
  fi
  rm -rf "$dir"
}

case ${1:-} in
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  restart) shift; cmd_restart "$@" ;;
  remove) shift; cmd_remove "$@" ;;
  *) die "usage: pg_cluster.sh start [--fsync off] | stop DIR [fast|immediate] | restart DIR | remove DIR" ;;
esac
