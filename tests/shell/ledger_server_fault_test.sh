#!/usr/bin/env bash
# The server stopped at random moments during 100 ledger-adds (issue 47, "Faults";
# docs/ledger_postgresql.md, "A dropped connection or a server restart during
# add"): a throwaway cluster (tests/support/pg_cluster.sh, --fsync off: a
# server crash loses nothing committed either way, and recovery takes 0.2 s
# rather than 5 s) holds a ledger whose budget fits every add; $workers adders
# run the adds, each starting its next add once the server's socket is there,
# while a background loop stops the server with `pg_ctl stop -m immediate` (a
# crash) after a random 0 to $stop_after_ms ms of uptime, keeps it down (mostly
# under $short_down_ms ms, which the store's reconnection rides out; one
# stop in $long_every for $long_down_ms ms, which it does not) and restarts it
# (crash recovery). To make stops land on a COMMIT in flight as well as on
# the statements before it, a deferred constraint trigger, created by the
# test as the ledger's owner, sleeps $commit_sleep s in every COMMIT that
# carries an entry: the server still commits or aborts the whole
# transaction; only the window grows. Afterwards, the server up:
#   - every add exited 0, 7 or 9 (README "Exit status"), and wrote nothing
#     on stdout unless it exited 0;
#   - each 7 wrote exactly one line, `dpbudget: error: LEDGER: ...; nothing was
#     recorded`, and its entry is not in the ledger;
#   - each 9 wrote exactly one line, `dpbudget: error: LEDGER: outcome
#     unknown: ...: the entry may or may not be recorded; run ledger-history /
#     ledger-status to see`;
#   - each 0 wrote on stderr nothing but `dpbudget: note:` lines, and its
#     entry is in the ledger;
#   - ledger-history lists entries 1..n with no gap, each an add this script
#     started, none twice; n = (adds that exited 0) + (adds that exited 9 and
#     are recorded); ledger-export reads every entry's body (one event each);
#     ledger-verify and ledger-status exit 0;
#   - the stops hit adds in flight: at least $min_in_flight adds failed after
#     they had connected (not merely "cannot connect"), so that the test
#     cannot pass without faults.
# Prints how many adds exited 0, 7 (by cause) and 9, the stops, and the time.
# Exit 77 (CTest: skipped) when the server is not installed.
# Usage: ledger_server_fault_test.sh DPBUDGET [ADDS]
set -uo pipefail
bin=${1:?usage: ledger_server_fault_test.sh DPBUDGET [ADDS]}
adds=${2:-100}
cluster_sh=$(cd "$(dirname "$0")/../support" && pwd)/pg_cluster.sh

# Adders at once: 3 keep both cores busy and an add in flight at most stops.
workers=3
# Uptime before a stop: up to 3 adds' length (an add here: ~0.1 s).
stop_after_ms=300
# A short stop's downtime, under the store's reconnection budget (waits
# 0.1 + 0.4 + 1.6 s, postgresql_ledger_store.cpp kPgReconnectWait) less a
# restart's 0.2 s: the add that lost its COMMIT finds out whether it counted.
short_down_ms=400
# One stop in LONG_EVERY stays down LONG_DOWN_MS, past that budget: an add
# whose COMMIT was in flight cannot find out (exit 9).
long_every=4
long_down_ms=2600
# The deferred trigger's sleep inside COMMIT (seconds, pg_sleep's unit).
commit_sleep=0.03
# The adds that must have failed after connecting.
min_in_flight=3

t_start=$EPOCHREALTIME
tmp=$(mktemp -d)
fail() {
  echo "ledger_server_fault: FAIL: $*" >&2
  exit 1
}
[ -x "$bin" ] || fail "$bin is not an executable"

start_out=$(bash "$cluster_sh" start --fsync off)
rc=$?
[ $rc = 77 ] && { rm -rf "$tmp"; exit 77; }
[ $rc = 0 ] || { rm -rf "$tmp"; fail "pg_cluster.sh start exited $rc"; }
eval "$start_out"
export PGPASSFILE
cleanup() {
  [ -n "${fault_pid:-}" ] && kill "$fault_pid" 2>/dev/null && wait "$fault_pid" 2>/dev/null
  bash "$cluster_sh" remove "$PG_CLUSTER_DIR" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
socket=$PGHOST/.s.PGSQL.${PGPORT:-5432}

name=fault
ledger=(--ledger "$PG_URI_OWNER" --ledger-name "$name")
label="$("$bin" ledger-init "${ledger[@]}" --epsilon 1000 --delta 1e-6 --format csv 2>"$tmp/init.err" |
  awk -F, 'NR == 2 { print $1 }')"
[ -n "$label" ] || fail "ledger-init failed: $(cat "$tmp/init.err")"
# The label as messages print it: postgresql://dpb_owner@/…/sock/dpbudget ledger fault.
case $label in postgresql://dpb_owner@*" ledger $name") ;; *) fail "ledger-init's label is '$label'" ;; esac
echo '{"laplace": {"scale": 100}}' >"$tmp/fits.json" # epsilon 0.01: 100 fit in 1000 many times over
psql -X -q -v ON_ERROR_STOP=1 "$PG_URI_OWNER" >/dev/null 2>"$tmp/psql.err" <<SQL ||
CREATE FUNCTION dpbudget.test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS
  \$\$ BEGIN PERFORM pg_sleep($commit_sleep); RETURN NULL; END \$\$;
CREATE CONSTRAINT TRIGGER test_slow_commit AFTER INSERT ON dpbudget.entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION dpbudget.test_slow_commit();
SQL
  fail "cannot create the slow-commit trigger: $(cat "$tmp/psql.err")"

ms_sleep() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# The fault loop: up a random while, a crash, down, restart; until told to stop.
fault_loop() {
  local stops=0 long=0 down
  while [ ! -e "$tmp/adds.done" ]; do
    ms_sleep $((RANDOM % stop_after_ms))
    [ -e "$tmp/adds.done" ] && break
    bash "$cluster_sh" stop "$PG_CLUSTER_DIR" immediate >/dev/null 2>>"$tmp/fault.err" ||
      echo "stop $stops failed" >>"$tmp/fault.err"
    stops=$((stops + 1))
    if ((stops % long_every == 0)); then
      down=$long_down_ms long=$((long + 1))
    else
      down=$((RANDOM % short_down_ms))
    fi
    ms_sleep "$down"
    bash "$cluster_sh" restart "$PG_CLUSTER_DIR" >/dev/null 2>>"$tmp/fault.err" ||
      echo "restart after stop $stops failed" >>"$tmp/fault.err"
  done
  echo "$stops $long" >"$tmp/stops"
}
fault_loop &
fault_pid=$!

# Worker W runs the adds i = W, W + workers, ...: each once the socket is
# there (a server up or starting), its exit status kept in $tmp/add.I.rc.
worker() {
  local i wait
  for ((i = $1; i <= adds; i += workers)); do
    for ((wait = 0; wait < 500; wait++)); do # 10 s at most: a restart that failed is reported below
      [ -S "$socket" ] && break
      ms_sleep 20
    done
    "$bin" ledger-add "${ledger[@]}" --name "$(printf 'a%03d' "$i")" --spec "$tmp/fits.json" \
      >"$tmp/add.$i.out" 2>"$tmp/add.$i.err"
    echo $? >"$tmp/add.$i.rc"
  done
}
pids=()
for ((w = 1; w <= workers; w++)); do
  worker "$w" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
touch "$tmp/adds.done"
wait "$fault_pid"
fault_pid=
[ -s "$tmp/fault.err" ] && fail "the fault loop: $(cat "$tmp/fault.err")"
read -r stops long_stops <"$tmp/stops"
# The server is up again after the loop's last restart; wait for its recovery.
for ((t = 0; t < 100; t++)); do
  pg_isready -q -h "$PGHOST" -p "${PGPORT:-5432}" && break
  ms_sleep 100
done

"$bin" ledger-history "${ledger[@]}" --format csv >"$tmp/history.csv" 2>"$tmp/history.err" ||
  fail "ledger-history exited $?: $(cat "$tmp/history.err")"
n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "entry") e = i; if ($i == "name") m = i; if ($i == "kind") k = i }; next }
  { if ($e != NR - 1) { print "entry " NR - 1 " is numbered " $e > "/dev/stderr"; bad = 1 }
    if ($k != "release") { print "entry " $e " is a " $k > "/dev/stderr"; bad = 1 }
    if ($m !~ /^a[0-9][0-9][0-9]$/) { print "entry " $e " has the name " $m > "/dev/stderr"; bad = 1 }
    if (seen[$m]++) { print "entry " $e ": " $m " recorded twice" > "/dev/stderr"; bad = 1 } }
  END { if (!e || !m || !k) { print "no entry, name or kind column" > "/dev/stderr"; bad = 1 }
    if (bad) exit 1; print NR - 1 }' "$tmp/history.csv" 2>"$tmp/history.bad") ||
  fail "ledger-history: $(cat "$tmp/history.bad")"
declare -A recorded=()
while IFS= read -r entry_name; do recorded[$entry_name]=1; done < <(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "name") m = i; next } { print $m }' "$tmp/history.csv")

ok=0 unavailable=0 unknown=0 unknown_recorded=0
cannot_connect=0 lost_before_commit=0 lost_commit_absent=0 lost_commit_found=0 other7=0
for ((i = 1; i <= adds; i++)); do
  add=$(printf 'a%03d' "$i")
  rc=$(cat "$tmp/add.$i.rc")
  lines=$(wc -l <"$tmp/add.$i.err")
  line=$(head -n1 "$tmp/add.$i.err")
  case $rc in
  0)
    ok=$((ok + 1))
    [ -n "${recorded[$add]:-}" ] || fail "$add exited 0 but is not in the history"
    grep -qv '^dpbudget: note: ' "$tmp/add.$i.err" &&
      fail "$add exited 0 with more than notes on stderr: $(cat "$tmp/add.$i.err")"
    grep -q 'reconnected and looked: it is recorded' "$tmp/add.$i.err" && lost_commit_found=$((lost_commit_found + 1))
    grep -q ' recorded ' "$tmp/add.$i.out" || fail "$add exited 0; its output says no 'recorded': $(cat "$tmp/add.$i.out")"
    ;;
  7)
    unavailable=$((unavailable + 1))
    [ "$lines" = 1 ] || fail "$add exited 7 with $lines lines on stderr: $(cat "$tmp/add.$i.err")"
    [[ $line == "dpbudget: error: $label: "*"; nothing was recorded" ]] ||
      fail "$add exited 7 with: $line"
    [ -z "${recorded[$add]:-}" ] || fail "$add exited 7 ('nothing was recorded') but is in the history"
    case $line in
    *": cannot connect: "*) cannot_connect=$((cannot_connect + 1)) ;;
    *"while committing"*"; reconnected and looked: it is not in the ledger; nothing was recorded") lost_commit_absent=$((lost_commit_absent + 1)) ;;
    *": the connection to the server was lost ("*) lost_before_commit=$((lost_before_commit + 1)) ;;
    *) other7=$((other7 + 1)) ;;
    esac
    ;;
  9)
    unknown=$((unknown + 1))
    [ "$lines" = 1 ] || fail "$add exited 9 with $lines lines on stderr: $(cat "$tmp/add.$i.err")"
    [[ $line == "dpbudget: error: $label: outcome unknown: "*": the entry may or may not be recorded; run ledger-history / ledger-status to see" ]] ||
      fail "$add exited 9 with: $line"
    [ -n "${recorded[$add]:-}" ] && unknown_recorded=$((unknown_recorded + 1))
    ;;
  *) fail "$add exited $rc (documented: 0, 7, 9): $(cat "$tmp/add.$i.err")" ;;
  esac
  if [ "$rc" != 0 ] && [ -s "$tmp/add.$i.out" ]; then
    fail "$add exited $rc but wrote on stdout: $(cat "$tmp/add.$i.out")"
  fi
done
((n == ok + unknown_recorded)) ||
  fail "$n entries, but $ok adds exited 0 and $unknown_recorded of the $unknown that exited 9 are recorded"
((other7 == 0)) || fail "$other7 adds exited 7 for a reason this test does not know (see above)"

"$bin" ledger-verify "${ledger[@]}" >"$tmp/verify.out" 2>"$tmp/verify.err" ||
  fail "ledger-verify exited $? with $n entries: $(cat "$tmp/verify.err")"
"$bin" ledger-status "${ledger[@]}" >"$tmp/status.out" 2>"$tmp/status.err" ||
  fail "ledger-status exited $?: $(cat "$tmp/status.err")"
"$bin" ledger-export "${ledger[@]}" >"$tmp/export.json" 2>"$tmp/export.err" ||
  fail "ledger-export exited $?: $(cat "$tmp/export.err")"
events=$(grep -o '"laplace"' "$tmp/export.json" | wc -l)
[ "$events" = "$n" ] || fail "ledger-export holds $events releases; the history lists $n"

in_flight=$((lost_before_commit + lost_commit_absent + lost_commit_found + unknown))
elapsed_ms=$(((${EPOCHREALTIME/./} - ${t_start/./}) / 1000))
echo "ledger_server_fault: $adds adds by $workers workers, $stops stops ($long_stops long), $((elapsed_ms / 1000)).$((elapsed_ms % 1000 / 100)) s:" \
  "exit 0: $ok (of which $lost_commit_found confirmed after a lost COMMIT);" \
  "exit 7: $unavailable ($cannot_connect cannot connect, $lost_before_commit lost before COMMIT, $lost_commit_absent lost in COMMIT and not recorded);" \
  "exit 9: $unknown ($unknown_recorded recorded); $n entries, verified"
((in_flight >= min_in_flight)) ||
  fail "only $in_flight adds were hit after connecting (at least $min_in_flight wanted): the stops missed the adds"
exit 0
