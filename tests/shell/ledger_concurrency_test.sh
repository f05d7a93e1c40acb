#!/usr/bin/env bash
# Concurrent ledger-add (docs/ledger.md#store), the same script on either
# store (tests/support/ledger_target.sh): every add of a round adds the same
# release to a fresh ledger whose budget fits exactly k of them; exactly k
# must be recorded (exit 0), every other add refused (exit 1, nothing
# recorded), the history must hold entries 1..k and no more, the chain must
# verify and the total must be within the budget. 20 rounds on a
# planned ledger (the gate: rdp, then pld; rdp alone on PostgreSQL, below) and
# one on an adaptive ledger (the Renyi filter decides).
#   sqlite:     20 processes, one add each; 7 fit.
#   postgresql: issue 47's size: 40 processes on 2 connections each (each
#               process runs two adds at once, each its own connection: 80
#               writers); 9 fit. The cluster is this script's own.
# A deadlock fails rather than hangs: each add is killed after add_timeout
# (below; exit 124, neither 0 nor 1).
#
# The release is a pure Laplace mechanism of scale 1 (epsilon 1 each). At
# delta 1e-6, k of them compose to about k under every accountant (rdp 7.001
# and pld 7.0002 for k = 7, 8.0003 and 8.00004 for k = 8), so a planned
# budget of k + 0.5 admits k and refuses the next, 0.5 away on both sides.
# The Renyi filter needs about k + 0.19 (7.185 for 7, 8.174 for 8), so an
# adaptive budget of k + 0.7 admits k and refuses the next. Both are checked
# serially first (with a margin of at least 0.25 each side), so a change in
# the accountants fails here and not as a flaky race.
#
# The adds start together: each process says it is ready on one FIFO, then
# blocks reading one line from another that this script holds open; once all
# are ready, one write of a newline per process releases them all.
# Usage: ledger_concurrency_test.sh DPBUDGET [sqlite|postgresql] [ROUNDS]
set -uo pipefail
bin=${1:?usage: ledger_concurrency_test.sh DPBUDGET [sqlite|postgresql] [ROUNDS]}
store_name=${2:-sqlite}
rounds=${3:-20}
# gate: a planned ledger's accountants (--planned-accountants). On SQLite the
# default, rdp then pld. On PostgreSQL rdp alone: each refused add asks pld
# only after rdp, inside the ledger's lock, and pld's 30 ms there (measured on
# this machine) made 71 refusals a round 2 s of serial waiting; what this
# test shows of the server, the lock, is the same with either gate.
case $store_name in
  sqlite) procs=20 conns=1 fit=7 gate=() ;;
  postgresql) procs=40 conns=2 fit=9 gate=(--planned-accountants rdp) ;;
  *) echo "usage: ledger_concurrency_test.sh DPBUDGET [sqlite|postgresql] [ROUNDS]" >&2; exit 2 ;;
esac
adds=$((procs * conns))
delta=1e-6
planned_budget=$fit.5
adaptive_budget=$fit.7
margin=0.25
# Over both stores' own lock waits (SQLite's busy timeout, the PostgreSQL
# store's 60 s lock_timeout), so that an add waiting too long is the store's
# to report (exit 7, a failure here); an add still running after it is hung.
add_timeout=120
# How long the processes of a round may take to start (a fork each, well
# under a second together; minutes only if the machine cannot fork): a
# process that never starts fails the round rather than hanging it.
start_timeout=60

tmp=$(mktemp -d)
# shellcheck source=tests/support/ledger_target.sh
source "$(dirname "$0")/../support/ledger_target.sh"
trap 'ledger_target_cleanup; rm -rf "$tmp"' EXIT
fail() {
  echo "ledger_concurrency: FAIL: $*" >&2
  exit 1
}
[ -x "$bin" ] || fail "$bin is not an executable"
ledger_target_init "$store_name"

spec=$tmp/laplace.json
echo '{"laplace": {"scale": 1}}' >"$spec"

# csv_col FILE COLUMN: the values of COLUMN (by its header name) in FILE's
# data rows, one a line. The outputs read here hold no quoted fields.
csv_col() {
  awk -F, -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next }
    c { print $c } END { if (!c) exit 3 }' "$1"
}
# le A B: A <= B as numbers.
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

# init NAME MODE BUDGET: a fresh ledger NAME (LEDGER set to its arguments);
# MODE is planned or adaptive.
init() {
  local extra=()
  [ "$2" = planned ] && extra=(--planned "${gate[@]}")
  ledger_args "$1"
  "$bin" ledger-init "${LEDGER[@]}" --epsilon "$3" --delta "$delta" "${extra[@]}" \
    >"$tmp/init.out" 2>"$tmp/init.err" || {
    cat "$tmp/init.err" >&2
    fail "ledger-init $2 --epsilon $3 failed"
  }
}

# calibrate MODE BUDGET: serially, exactly $fit releases fit, the 8th is
# refused, and neither is near the edge.
calibrate() {
  local mode=$1 budget=$2 i rc v
  init "calibrate-$mode" "$mode" "$budget"
  for ((i = 1; i <= fit + 1; i++)); do
    "$bin" ledger-add "${LEDGER[@]}" --name "c$i" --spec "$spec" --format csv \
      >"$tmp/cal.out" 2>"$tmp/cal.err"
    rc=$?
    if ((i <= fit)); then
      [ "$rc" = 0 ] || { cat "$tmp/cal.err" >&2; fail "$mode: serial add $i of $fit exited $rc, expected 0"; }
    else
      [ "$rc" = 1 ] || { cat "$tmp/cal.err" >&2; fail "$mode: serial add $i exited $rc, expected 1 (refused)"; }
    fi
    # The figure the gate decided on: every planned accountant's total for a
    # planned ledger, the filter's needed epsilon for an adaptive one.
    local cols=(filter_needs_epsilon)
    [ "$mode" = planned ] && cols=(planned_rdp planned_pld)
    for c in "${cols[@]}"; do
      # planned_pld is there only when rdp alone did not decide.
      if ! v=$(csv_col "$tmp/cal.out" "$c") || [ -z "$v" ]; then
        [ "$c" = planned_pld ] && continue
        fail "$mode: add $i: no $c in: $(cat "$tmp/cal.out")"
      fi
      if ((i == fit)); then
        le "$v" "$(awk -v b="$budget" -v m="$margin" 'BEGIN { print b - m }')" ||
          fail "$mode: after $fit releases $c is $v, within $margin of the budget $budget: too close to call"
      elif ((i == fit + 1)); then
        le "$(awk -v b="$budget" -v m="$margin" 'BEGIN { print b + m }')" "$v" ||
          fail "$mode: release $((fit + 1)) would make $c $v, within $margin of the budget $budget: too close to call"
      fi
    done
  done
  echo "ok: $mode ledger with epsilon $budget: serially exactly $fit releases fit, the $((fit + 1))th is refused"
}

# round MODE BUDGET N: $adds concurrent adds ($procs processes, $conns each)
# to a fresh ledger; checks all. Add c of process i is "p$i.$c".
round() {
  local mode=$1 budget=$2 n=$3 dir=$tmp/round-$1-$3 t0=$SECONDS
  mkdir "$dir"
  init "round-$mode-$n" "$mode" "$budget"
  mkfifo "$dir/go" "$dir/ready"
  local go ready
  exec {go}<>"$dir/go" {ready}<>"$dir/ready"
  local pids=() i c
  for ((i = 1; i <= procs; i++)); do
    (
      echo >&"$ready"
      read -r -u "$go" _
      exec {go}<&- {ready}>&-
      # The process's connections at once; each add's status in its rc file.
      adders=()
      for ((c = 1; c <= conns; c++)); do
        timeout "$add_timeout" "$bin" ledger-add "${LEDGER[@]}" --name "p$i.$c" --spec "$spec" \
          --format csv >"$dir/out.$i.$c" 2>"$dir/err.$i.$c" &
        adders+=($!)
      done
      for ((c = 1; c <= conns; c++)); do
        wait "${adders[c - 1]}"
        echo $? >"$dir/rc.$i.$c"
      done
    ) &
    pids+=($!)
  done
  # Every process says it is about to read (a one-byte write to a FIFO is
  # atomic), then one write releases them all.
  for ((i = 1; i <= procs; i++)); do
    read -r -t "$start_timeout" -u "$ready" _ ||
      fail "$mode round $n: only $((i - 1)) of $procs processes started within $start_timeout s"
  done
  printf '%*s' "$procs" '' | tr ' ' '\n' >&"$go"
  for ((i = 1; i <= procs; i++)); do wait "${pids[i - 1]}"; done
  exec {go}<&- {ready}<&-
  local ok=() refused=() other=() rc id
  for ((i = 1; i <= procs; i++)); do
    for ((c = 1; c <= conns; c++)); do
      id=$i.$c
      rc=$(cat "$dir/rc.$id" 2>/dev/null) || rc=missing
      case $rc in
        0) ok+=("$id") ;;
        1) refused+=("$id") ;;
        *) other+=("$id:$rc") ;;
      esac
    done
  done
  local what="$mode round $n"
  if ((${#other[@]} > 0)); then
    for x in "${other[@]}"; do
      echo "--- add p${x%%:*} exited ${x#*:}; its stderr:" >&2
      cat "$dir/err.${x%%:*}" >&2
    done
    fail "$what: ${#other[@]} add(s) exited neither 0 nor 1: ${other[*]} (process.connection:status)"
  fi
  if [ "${#ok[@]}" != "$fit" ] || [ "${#refused[@]}" != $((adds - fit)) ]; then
    fail "$what: ${#ok[@]} recorded (exit 0: ${ok[*]}) and ${#refused[@]} refused; expected $fit and $((adds - fit))"
  fi

  # Every add's verdict and entry number, from the csv columns of that name,
  # read by one awk (a process per add made the checks a second a round).
  local -A verdict=() entry=()
  local id v e
  while read -r id v e; do
    verdict[$id]=$v entry[$id]=$e
  done < <(awk -F, 'FNR == 1 { v = e = 0; for (i = 1; i <= NF; i++) { if ($i == "verdict") v = i; if ($i == "entry") e = i }; next }
    { id = FILENAME; sub(/.*\/out\./, "", id)
      print id, (v && $v != "" ? $v : "-"), (e && $e != "" ? $e : "-") }' "$dir"/out.*)
  # Each recorded add says so, with its entry number; together 1..$fit.
  local entries=() names=()
  for i in "${ok[@]}"; do
    [ "${verdict[$i]:-}" = recorded ] || fail "$what: add p$i exited 0 but its verdict is not 'recorded': $(cat "$dir/out.$i")"
    entries+=("${entry[$i]}")
    names+=("p$i")
  done
  local got want
  got=$(printf '%s\n' "${entries[@]}" | sort -n | tr '\n' ' ')
  want=$(seq 1 "$fit" | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "$what: the recorded adds report entries $got; expected $want"
  # Each refused add says why, and that nothing was recorded.
  local errs=() silent
  for i in "${refused[@]}"; do
    [ "${verdict[$i]:-}" = refused ] || fail "$what: add p$i exited 1 but its verdict is not 'refused': $(cat "$dir/out.$i")"
    errs+=("$dir/err.$i")
  done
  silent=$({ grep -L "does not fit" "${errs[@]}"; grep -L "nothing recorded" "${errs[@]}"; } | head -n1)
  [ -z "$silent" ] || fail "$what: add p${silent##*/err.} exited 1 without saying it does not fit: $(cat "$silent")"

  # The ledger: entries 1..$fit in order, the recorded adds' names, nothing
  # half-written (SQLite only: no hot journal left beside the file), the
  # chain intact, within the budget.
  if [ "$store" = sqlite ] && [ -e "${LEDGER[1]}-journal" ]; then
    fail "$what: a rollback journal is left beside the ledger"
  fi
  "$bin" ledger-history "${LEDGER[@]}" --format csv >"$dir/history.csv" 2>"$dir/history.err" ||
    fail "$what: ledger-history failed: $(cat "$dir/history.err")"
  got=$(csv_col "$dir/history.csv" entry | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "$what: ledger-history lists entries '$got'; expected '$want'"
  [ "$(csv_col "$dir/history.csv" kind | sort -u)" = release ] || fail "$what: history holds entries that are not releases"
  got=$(csv_col "$dir/history.csv" name | sort | tr '\n' ' ')
  want=$(printf '%s\n' "${names[@]}" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "$what: history names '$got'; the adds that exited 0 were '$want'"
  "$bin" ledger-verify "${LEDGER[@]}" >"$dir/verify.out" 2>"$dir/verify.err" ||
    fail "$what: ledger-verify exited $?: $(cat "$dir/verify.err")"
  "$bin" ledger-status "${LEDGER[@]}" --accountant rdp,pld --format csv \
    >"$dir/status.csv" 2>"$dir/status.err" || fail "$what: ledger-status failed: $(cat "$dir/status.err")"
  local basis eps rows=0
  while IFS=, read -r basis eps; do
    [ "$basis" = planned ] || continue
    rows=$((rows + 1))
    le "$eps" "$budget" || fail "$what: the planned total is $eps, over the budget $budget"
  done < <(paste -d, <(csv_col "$dir/status.csv" basis) <(csv_col "$dir/status.csv" epsilon))
  if [ "$mode" = planned ]; then
    [ "$rows" = 2 ] || fail "$what: ledger-status shows $rows planned totals; expected rdp and pld"
  else
    local needs used
    needs=$(paste -d, <(csv_col "$dir/status.csv" basis) <(csv_col "$dir/status.csv" filter_needs_epsilon) | awk -F, '$1 == "adaptive" { print $2 }')
    used=$(paste -d, <(csv_col "$dir/status.csv" basis) <(csv_col "$dir/status.csv" filter_used) | awk -F, '$1 == "adaptive" { print $2 }')
    if [ -z "$needs" ] || ! le "$needs" "$budget"; then
      fail "$what: the filter needs epsilon '$needs', over the budget $budget"
    fi
    if [ -z "$used" ] || ! le "$used" 1; then fail "$what: the filter is used '$used' (over 1)"; fi
  fi
  rm -rf "$dir"
  echo "ok: $mode round $n: $fit of $adds recorded, in $((SECONDS - t0)) s"
}

start=$SECONDS
calibrate planned "$planned_budget"
calibrate adaptive "$adaptive_budget"
for ((r = 1; r <= rounds; r++)); do
  round planned "$planned_budget" "$r"
done
echo "ok: $store: $rounds rounds of $adds concurrent adds ($procs processes, $conns each) to a planned ledger: each recorded exactly $fit (entries 1..$fit), refused $((adds - fit)) (exit 1), verified, within the budget"
round adaptive "$adaptive_budget" 1
echo "ok: $store: $adds concurrent adds to an adaptive (Renyi filter) ledger: exactly $fit recorded, verified, within the budget"
if [ "$store" = postgresql ]; then
  # No add met a deadlock (the server would have broken it, failing one add)
  # or gave up waiting for the ledger's lock: the server's log says neither.
  for what in 'deadlock detected' 'canceling statement due to lock timeout'; do
    n=$(grep -c "$what" "$PG_CLUSTER_DIR/log/server.log")
    [ "$n" = 0 ] || fail "the server's log says '$what' $n time(s)"
  done
  echo "ok: postgresql: the server's log holds no deadlock and no lock timeout"
fi
echo "ok: all in $((SECONDS - start)) s"
