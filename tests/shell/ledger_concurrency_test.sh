#!/usr/bin/env bash
# Concurrent ledger-add (docs/ledger.md#store): 20 processes each add the same
# release to a fresh ledger whose budget fits exactly 7 of them; exactly 7
# must be recorded (exit 0), 13 refused (exit 1, nothing recorded), the
# history must hold entries 1..7 and no more, the chain must verify and the
# total must be within the budget. 20 rounds on a planned ledger (the gate:
# rdp, then pld) and one on an adaptive ledger (the Renyi filter decides).
#
# The release is a pure Laplace mechanism of scale 1 (epsilon 1 each). At
# delta 1e-6, k of them compose to about k under every accountant (rdp 7.001
# and pld 7.0002 for k = 7, 8.0003 and 8.00004 for k = 8), so a planned
# budget of 7.5 admits 7 and refuses the 8th, 0.5 away on both sides. The
# Renyi filter needs about k + 0.19 (7.185 for 7, 8.174 for 8), so an
# adaptive budget of 7.7 admits 7 and refuses the 8th. Both are checked
# serially first (with a margin of at least 0.25 each side), so a change in
# the accountants fails here and not as a flaky race.
#
# The 20 processes start together: each blocks reading one line from a FIFO
# that this script holds open, and one write of 20 newlines releases them all.
# Usage: ledger_concurrency_test.sh DPBUDGET [ROUNDS]
set -uo pipefail
bin=${1:?usage: ledger_concurrency_test.sh DPBUDGET [ROUNDS]}
rounds=${2:-20}
procs=20
fit=7
delta=1e-6
planned_budget=7.5
adaptive_budget=7.7
margin=0.25

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "ledger_concurrency: FAIL: $*" >&2
  exit 1
}
[ -x "$bin" ] || fail "$bin is not an executable"

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

# init LEDGER MODE BUDGET: a fresh ledger; MODE is planned or adaptive.
init() {
  local extra=()
  [ "$2" = planned ] && extra=(--planned)
  "$bin" ledger-init --ledger "$1" --epsilon "$3" --delta "$delta" "${extra[@]}" \
    >"$tmp/init.out" 2>"$tmp/init.err" || {
    cat "$tmp/init.err" >&2
    fail "ledger-init $2 --epsilon $3 failed"
  }
}

# calibrate MODE BUDGET: serially, exactly $fit releases fit, the 8th is
# refused, and neither is near the edge.
calibrate() {
  local mode=$1 budget=$2 ledger=$tmp/calibrate-$1.ledger i rc v
  init "$ledger" "$mode" "$budget"
  for ((i = 1; i <= fit + 1; i++)); do
    "$bin" ledger-add --ledger "$ledger" --name "c$i" --spec "$spec" --format csv \
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

# round MODE BUDGET N: $procs concurrent adds to a fresh ledger; checks all.
round() {
  local mode=$1 budget=$2 n=$3 dir=$tmp/round-$1-$3
  mkdir "$dir"
  local ledger=$dir/ledger
  init "$ledger" "$mode" "$budget"
  mkfifo "$dir/go"
  local go
  exec {go}<>"$dir/go"
  local pids=() i
  for ((i = 1; i <= procs; i++)); do
    (
      read -r -u "$go" _
      exec timeout 120 "$bin" ledger-add --ledger "$ledger" --name "p$i" --spec "$spec" \
        --format csv >"$dir/out.$i" 2>"$dir/err.$i" {go}<&-
    ) &
    pids+=($!)
  done
  sleep 0.2  # let every process reach its read; a late one only starts late
  printf '%*s' "$procs" '' | tr ' ' '\n' >&"$go"
  local ok=() refused=() other=() rc
  for ((i = 1; i <= procs; i++)); do
    wait "${pids[i - 1]}"
    rc=$?
    case $rc in
      0) ok+=("$i") ;;
      1) refused+=("$i") ;;
      *) other+=("$i:$rc") ;;
    esac
  done
  exec {go}<&-
  local what="$mode round $n"
  if ((${#other[@]} > 0)); then
    for x in "${other[@]}"; do
      echo "--- process ${x%%:*} exited ${x#*:}; its stderr:" >&2
      cat "$dir/err.${x%%:*}" >&2
    done
    fail "$what: ${#other[@]} process(es) exited neither 0 nor 1: ${other[*]} (process:status)"
  fi
  if [ "${#ok[@]}" != "$fit" ] || [ "${#refused[@]}" != $((procs - fit)) ]; then
    fail "$what: ${#ok[@]} recorded (exit 0: ${ok[*]}) and ${#refused[@]} refused; expected $fit and $((procs - fit))"
  fi

  # Each recorded process says so, with its entry number; together 1..7.
  local entries=() names=()
  for i in "${ok[@]}"; do
    [ "$(csv_col "$dir/out.$i" verdict)" = recorded ] || fail "$what: process $i exited 0 but its verdict is not 'recorded': $(cat "$dir/out.$i")"
    entries+=("$(csv_col "$dir/out.$i" entry)")
    names+=("p$i")
  done
  local got want
  got=$(printf '%s\n' "${entries[@]}" | sort -n | tr '\n' ' ')
  want=$(seq 1 "$fit" | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "$what: the recorded processes report entries $got; expected $want"
  # Each refused process says why, and that nothing was recorded.
  for i in "${refused[@]}"; do
    [ "$(csv_col "$dir/out.$i" verdict)" = refused ] || fail "$what: process $i exited 1 but its verdict is not 'refused': $(cat "$dir/out.$i")"
    if ! grep -q "does not fit" "$dir/err.$i" || ! grep -q "nothing recorded" "$dir/err.$i"; then
      fail "$what: process $i exited 1 without saying it does not fit: $(cat "$dir/err.$i")"
    fi
  done

  # The ledger: entries 1..7 in order, the recorded processes' names, nothing
  # half-written (no hot journal left), the chain intact, within the budget.
  [ ! -e "$ledger-journal" ] || fail "$what: a rollback journal is left beside the ledger"
  "$bin" ledger-history --ledger "$ledger" --format csv >"$dir/history.csv" 2>"$dir/history.err" ||
    fail "$what: ledger-history failed: $(cat "$dir/history.err")"
  got=$(csv_col "$dir/history.csv" entry | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "$what: ledger-history lists entries '$got'; expected '$want'"
  [ "$(csv_col "$dir/history.csv" kind | sort -u)" = release ] || fail "$what: history holds entries that are not releases"
  got=$(csv_col "$dir/history.csv" name | sort | tr '\n' ' ')
  want=$(printf '%s\n' "${names[@]}" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "$what: history names '$got'; the processes that exited 0 were '$want'"
  "$bin" ledger-verify --ledger "$ledger" >"$dir/verify.out" 2>"$dir/verify.err" ||
    fail "$what: ledger-verify exited $?: $(cat "$dir/verify.err")"
  "$bin" ledger-status --ledger "$ledger" --accountant rdp,pld --format csv \
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
}

start=$SECONDS
calibrate planned "$planned_budget"
calibrate adaptive "$adaptive_budget"
for ((r = 1; r <= rounds; r++)); do
  round planned "$planned_budget" "$r"
done
echo "ok: $rounds rounds of $procs concurrent adds to a planned ledger: each recorded exactly $fit (entries 1..$fit), refused $((procs - fit)), verified, within the budget"
round adaptive "$adaptive_budget" 1
echo "ok: $procs concurrent adds to an adaptive (Renyi filter) ledger: exactly $fit recorded, verified, within the budget"
echo "ok: all in $((SECONDS - start)) s"
