#!/usr/bin/env bash
# A ledger-add killed (SIGKILL) at any moment leaves the ledger before or
# after the whole entry (docs/ledger.md#store): 200 trials, each starting
# ledger-add of a release that fits and killing it after a random delay: odd
# trials anywhere in [0, 1.5 D), D an add's measured duration (start-up, the
# gate, the write transaction and its fsyncs, exit), even trials in
# [D/2, D), where the write transaction lies (its last third or so on the
# machines tried: the kills there find a hot journal or a commit far more
# often). D is measured before the trials, then again by an add left to
# finish every 10 trials, to follow the machine's load. After each trial:
#   - the add exited 0 or was killed (137), nothing else;
#   - the entries grew by 0 or 1, by 1 when the add exited 0, and by 0 when it
#     left a hot rollback journal (killed inside the transaction: SQLite rolls
#     it back);
#   - the first dpbudget command after the kill, whichever it is (the verbs
#     are taken in turn: ledger-verify, ledger-history, ledger-status,
#     ledger-export, ledger-add --dry-run, a refused ledger-add), succeeds: the
#     documented "rolled back at the next open" must hold for every verb, not
#     only for the writers;
#   - ledger-history lists entries 1..n with no gap, each a release this
#     script started, none twice.
# Every 25 trials and at the end: ledger-verify exits 0, ledger-export reads
# every entry's body (one event per entry), the store's own check passes
# (SQLite: `PRAGMA integrity_check` says ok, when the sqlite3 tool is
# installed; PostgreSQL: the ledger's head_seq is its last entry, the entries
# numbered 1..n without a gap, read with psql), and n lies between the adds
# that exited 0 and the adds started. Counts of where the kills landed are
# printed.
# The same script on either store (tests/support/ledger_target.sh). On
# PostgreSQL the client is killed, never the server (the server's faults are
# another test's): a killed client's connection drops, the server rolls its
# transaction back and frees the ledger's lock, and there is no journal (the
# journal states below are SQLite's; on a server every kill is "before the
# commit", entry absent, or "after the commit", entry whole).
# Failures of the first command after a crash are collected and reported at
# the end (a refused ledger-add, which opens the file for writing, then rolls
# the journal back so that the trials go on); any other failure stops at once.
# Usage: ledger_crash_test.sh DPBUDGET [sqlite|postgresql] [TRIALS]
set -uo pipefail
bin=${1:?usage: ledger_crash_test.sh DPBUDGET [sqlite|postgresql] [TRIALS]}
store_name=${2:-sqlite}
trials=${3:-200}
check_every=25

tmp=$(mktemp -d)
# shellcheck source=tests/support/ledger_target.sh
source "$(dirname "$0")/../support/ledger_target.sh"
trap 'ledger_target_cleanup; rm -rf "$tmp"' EXIT
fail() {
  echo "ledger_crash: FAIL: $*" >&2
  exit 1
}
[ -x "$bin" ] || fail "$bin is not an executable"
ledger_target_init "$store_name"
# The store's own integrity check needs its tool (sqlite3; psql).
have_sql_tool=false
(ledger_sql_tool 2>/dev/null) && have_sql_tool=true

ledger_args crash
journal=$tmp/crash.ledger-journal  # SQLite's rollback journal (none on a server)
echo '{"laplace": {"scale": 100}}' >"$tmp/fits.json"     # epsilon 0.01: 200 fit in 1000
echo '{"laplace": {"scale": 0.0001}}' >"$tmp/huge.json"  # epsilon 10000: never fits
"$bin" ledger-init "${LEDGER[@]}" --epsilon 1000 --delta 1e-6 >/dev/null 2>"$tmp/init.err" ||
  fail "ledger-init failed: $(cat "$tmp/init.err")"

# A sleep with microsecond resolution and no fork: read with a timeout from a
# FIFO that never gets a line.
mkfifo "$tmp/never"
exec {never}<>"$tmp/never"
sleep_us() { read -r -t "$(printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)))" -u "$never" _; }
elapsed_us() {  # elapsed_us T0: microseconds since T0, an $EPOCHREALTIME
  local now=${EPOCHREALTIME/./} then=${1/./}
  echo $((10#$now - 10#$then))
}
rand_below() { echo $(((RANDOM * 32768 + RANDOM) % $1)); }

# count_entries: ledger-history's entries, checked 1..n, each a release this
# script started and none twice; prints n.
count_entries() {
  "$bin" ledger-history "${LEDGER[@]}" --format csv >"$tmp/history.csv" 2>"$tmp/history.err" ||
    fail "${1:-}ledger-history exited $?: $(cat "$tmp/history.err")"
  local n
  n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "entry") e = i; if ($i == "name") m = i; if ($i == "kind") k = i }; next }
    { if ($e != NR - 1) { print "entry " NR - 1 " is numbered " $e > "/dev/stderr"; bad = 1 }
      if ($k != "release") { print "entry " $e " is a " $k > "/dev/stderr"; bad = 1 }
      if ($m !~ /^(warm|t)[0-9]+$/) { print "entry " $e " has the name " $m > "/dev/stderr"; bad = 1 }
      if (seen[$m]++) { print "entry " $e ": " $m " recorded twice" > "/dev/stderr"; bad = 1 } }
    END { if (!e || !m || !k) { print "no entry, name or kind column" > "/dev/stderr"; bad = 1 }
      if (bad) exit 1; print NR - 1 }' "$tmp/history.csv" 2>"$tmp/history.bad") ||
    fail "${1:-}ledger-history: $(cat "$tmp/history.bad")"
  echo "$n"
}

started=0 succeeded=0
# full_check WHEN: the whole ledger reads and verifies.
full_check() {
  local n
  n=$(count_entries "$1: ") || exit 1
  "$bin" ledger-verify "${LEDGER[@]}" >"$tmp/verify.out" 2>"$tmp/verify.err" ||
    fail "$1: ledger-verify exited $? with $n entries: $(cat "$tmp/verify.err")"
  "$bin" ledger-export "${LEDGER[@]}" >"$tmp/export.json" 2>"$tmp/export.err" ||
    fail "$1: ledger-export exited $?: $(cat "$tmp/export.err")"
  local events
  events=$(grep -c '"laplace"' "$tmp/export.json")
  [ "$events" = "$n" ] || fail "$1: ledger-export holds $events releases; the history lists $n"
  if $have_sql_tool && [ "$store" = sqlite ]; then
    local ic
    ic=$(ledger_sql crash 'PRAGMA integrity_check' 2>&1)
    [ "$ic" = ok ] || fail "$1: PRAGMA integrity_check: $ic"
  elif $have_sql_tool; then
    # The row the add locks and updates in the same transaction as its
    # insert: its head_seq is the last entry's number, and the entries are
    # 1..n with no gap.
    local rows
    rows=$(ledger_sql crash "SELECT head_seq, (SELECT count(*) FROM @entries WHERE @this),
      (SELECT coalesce(max(seq), 0) FROM @entries WHERE @this) FROM dpbudget.ledgers
      WHERE name = 'crash'" 2>&1)
    [ "$rows" = "$n|$n|$n" ] || fail "$1: head_seq|count|max(seq) is '$rows', expected '$n|$n|$n'"
  fi
  if ((n < succeeded || n > started)); then
    fail "$1: $n entries, but $succeeded adds exited 0 and $started were started"
  fi
}

# The duration of an add, from the fork to its end, as the trials measure
# the kill's delay: the median of 5 (these 5 are recorded, as warm-up).
durations=()
for i in 1 2 3 4 5; do
  t0=$EPOCHREALTIME
  "$bin" ledger-add "${LEDGER[@]}" --name "warm$i" --spec "$tmp/fits.json" >/dev/null 2>&1 &
  wait $! || fail "warm-up add $i exited $?"
  durations+=("$(elapsed_us "$t0")")
  started=$((started + 1)) succeeded=$((succeeded + 1))
done
duration=$(printf '%s\n' "${durations[@]}" | sort -n | sed -n 3p)
echo "an add takes ${duration} us (median of 5); kills land at random in [0, $((duration * 3 / 2))) us, every other one in [$((duration / 2)), ${duration}) us"
min_window=999999999 max_window=0
full_check "after the warm-up"

first_verbs=(verify history status export dry-run refused-add)
declare -A first_failures=()
failure_lines=()
finished=0 before_journal=0 cold_journal=0 hot_journal=0 after_commit=0
n=$(count_entries) || exit 1
start=$SECONDS
# A journal's identity: a read-only verb leaves a journal that is not hot
# in place, and a trial that dies before writing leaves it untouched.
journal_sig() { stat -c '%i %.9Y %s' "$journal" 2>/dev/null; }
stale_journals=0
for ((t = 1; t <= trials; t++)); do
  window=$((duration * 3 / 2))
  ((window < min_window)) && min_window=$window
  ((window > max_window)) && max_window=$window
  if ((t % 2)); then
    delay=$(rand_below "$window")
  else
    delay=$((duration / 2 + $(rand_below $((duration / 2)))))
  fi
  pre=$(journal_sig)
  "$bin" ledger-add "${LEDGER[@]}" --name "t$t" --spec "$tmp/fits.json" >/dev/null 2>"$tmp/add.err" &
  pid=$!
  started=$((started + 1))
  sleep_us "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  what="trial $t (killed after $delay us)"
  case $rc in
    0) succeeded=$((succeeded + 1)) ;;
    137) ;;
    *) fail "$what: ledger-add exited $rc (expected 0, or 137 when killed): $(cat "$tmp/add.err")" ;;
  esac

  # What the kill left: no journal, a journal not yet valid (its header not
  # written: nothing in the database changed), or a hot one (the database may
  # be half-written; the next open must roll it back). A journal an earlier
  # trial left and this one did not touch counts as none.
  state=none
  if [ -e "$journal" ] && [ -n "$pre" ] && [ "$(journal_sig)" = "$pre" ]; then
    stale_journals=$((stale_journals + 1))  # an earlier trial's, untouched
  elif [ -e "$journal" ]; then
    state=cold
    magic=$(od -An -tx1 -N8 "$journal" | tr -d ' \n')
    [ "$magic" = d9d505f920a163d7 ] && state=hot
  fi

  # The first command after the crash.
  verb=${first_verbs[$(((t - 1) % ${#first_verbs[@]}))]}
  case $verb in
    verify) cmd=(ledger-verify) want=0 ;;
    history) cmd=(ledger-history --format csv) want=0 ;;
    status) cmd=(ledger-status) want=0 ;;
    export) cmd=(ledger-export) want=0 ;;
    dry-run) cmd=(ledger-add --name probe --spec "$tmp/fits.json" --dry-run) want=0 ;;
    refused-add) cmd=(ledger-add --name probe --spec "$tmp/huge.json") want=1 ;;
  esac
  "$bin" "${cmd[@]}" "${LEDGER[@]}" >"$tmp/first.out" 2>"$tmp/first.err"
  got=$?
  if [ "$got" != "$want" ]; then
    [ "$verb" = refused-add ] && fail "$what: the refused ledger-add after the crash exited $got: $(cat "$tmp/first.err")"
    first_failures[$verb]=$((${first_failures[$verb]:-0} + 1))
    failure_lines+=("$what, journal $state: 'dpbudget ${cmd[*]}' exited $got, expected $want: $(grep -v warning "$tmp/first.err" | head -1)")
    # Go on: a writer opens the file read-write and rolls the journal back.
    "$bin" ledger-add "${LEDGER[@]}" --name probe --spec "$tmp/huge.json" >/dev/null 2>"$tmp/probe.err"
    got=$?
    [ "$got" = 1 ] || fail "$what: a refused ledger-add exited $got (expected 1): $(cat "$tmp/probe.err")"
    [ ! -e "$journal" ] || [ "$state" != hot ] || fail "$what: the hot journal is still there after a writer opened the ledger"
  fi

  before=$n
  n=$(count_entries "$what: ") || exit 1
  grew=$((n - before))
  case "$rc:$grew:$state" in
    0:1:none) finished=$((finished + 1)) ;;
    0:*) fail "$what: ledger-add exited 0 but the entries went from $before to $n (journal: $state)" ;;
    137:0:none) before_journal=$((before_journal + 1)) ;;
    137:0:cold) cold_journal=$((cold_journal + 1)) ;;
    137:0:hot) hot_journal=$((hot_journal + 1)) ;;
    137:1:none) after_commit=$((after_commit + 1)) ;;
    *) fail "$what: killed, the entries went from $before to $n, journal left: $state" ;;
  esac
  ((t % check_every == 0)) && full_check "after trial $t"
  if ((t % 10 == 0)); then  # an add left to finish: how long adds take now
    t0=$EPOCHREALTIME
    "$bin" ledger-add "${LEDGER[@]}" --name "warm$((5 + t / 10))" --spec "$tmp/fits.json" >/dev/null 2>"$tmp/add.err" &
    wait $! || fail "after trial $t: a timing add exited $?: $(cat "$tmp/add.err")"
    duration=$(((3 * duration + $(elapsed_us "$t0")) / 4))
    started=$((started + 1)) succeeded=$((succeeded + 1))
    n=$(count_entries "after trial $t: ") || exit 1
  fi
done
full_check "at the end"
elapsed=$((SECONDS - start))

echo "$store: trials: $trials in $elapsed s; kill windows from $min_window to $max_window us; entries: $n ($succeeded adds exited 0, $started started)"
if [ "$store" = sqlite ]; then
  echo "  killed before the write transaction wrote its journal: $before_journal"
  echo "  killed while writing the journal (not yet valid; nothing to roll back): $cold_journal"
  echo "  killed inside the transaction, a hot journal left (rolled back, entry absent): $hot_journal"
  echo "  killed after the commit (entry whole): $after_commit"
  echo "  finished before the kill: $finished"
  echo "  (trials that found an earlier trial's journal, not hot, and left it untouched: $stale_journals)"
  if ((hot_journal + after_commit == 0)); then
    echo "warning: no kill landed inside the write transaction or after its commit (an add took ${duration} us); the trials show less than they should" >&2
  fi
else
  # The server logs each connection that drops with its transaction open
  # (and rolls that transaction back): the kills inside one of an add's
  # transactions (reading the header, or the add's own, holding the ledger's
  # lock). Counted once all are over (a backend notices
  # the drop when it next reads from the client).
  inside=$(grep -c 'unexpected EOF on client connection with an open transaction' \
    "$PG_CLUSTER_DIR/log/server.log")
  echo "  killed before the commit (entry absent): $before_journal, of which inside a transaction (the server saw the connection drop with it open, and rolled it back): $inside"
  echo "  killed after the commit (entry whole): $after_commit"
  echo "  finished before the kill: $finished"
  ((inside <= before_journal)) ||
    fail "the server saw $inside transactions dropped open, but only $before_journal adds were killed before their commit"
  if ((inside == 0 || after_commit == 0)); then
    echo "warning: no kill landed inside a transaction, or none after a commit (an add took ${duration} us); the trials show less than they should" >&2
  fi
fi
$have_sql_tool || echo "note: the store's tool (sqlite3; psql) is not installed; its integrity check was skipped"
if ((${#failure_lines[@]} > 0)); then
  for v in "${!first_failures[@]}"; do
    echo "ledger_crash: FAIL: the first command after a crash, $v, failed ${first_failures[$v]} time(s)" >&2
  done
  echo "  expected: a crash leaves the ledger readable by every verb (docs/ledger.md#store: rolled back at the next open); the first of ${#failure_lines[@]}:" >&2
  printf '  %s\n' "${failure_lines[@]:0:5}" >&2
  exit 1
fi
echo "ok: every kill left the ledger before or after the whole entry; it verifies and reads whole"
