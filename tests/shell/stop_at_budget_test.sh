#!/usr/bin/env bash
# docs/examples/stop_at_budget.py, the guide's loop that stops training at a
# budget (docs/guide.md#asking-as-training-goes), run against the built
# binary: it must stop after the last whole epoch that `dpbudget steps` (the
# solver, another computation than the streamed sweep the example asks)
# allows, and the epsilon it printed for that epoch, and for the next, must
# be `dpbudget epsilon`'s; docs/guide.md shows its last line. The settings
# below are the example's constants.
# usage: stop_at_budget_test.sh DPBUDGET SOURCE_DIR
# Exit 77 (CTest: skipped) when python3 is not installed; CI installs it.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: stop_at_budget_test.sh DPBUDGET SOURCE_DIR" >&2
  exit 2
fi
bin=$1
src=$2
if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 is not installed (apt-get install -y python3; .ci/run installs it)" >&2
  exit 77
fi
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# The example's settings: q 0.01, sigma 0.8, 100 steps an epoch, budget 8 at
# delta 1e-5, the pld accountant.
run=(-q 0.01 --sigma 0.8 --delta 1e-5 --accountant pld --format json)
last=$(timeout 300 python3 "$src/docs/examples/stop_at_budget.py" "$bin" | tail -n 1) ||
  fail "the example failed or took longer than 300 s"
echo "example: $last"
field() {  # field JSON KEY: a number of a JSON object, or of its first result
  python3 -c 'import json, sys
d = json.loads(sys.argv[1])
print(repr(d[sys.argv[2]] if sys.argv[2] in d else d["results"][0][sys.argv[2]]))' "$1" "$2"
}
max_steps=$(field "$("$bin" steps --epsilon 8 "${run[@]}")" steps)
epochs=$(field "$last" epochs)
echo "dpbudget steps: at most $max_steps steps with epsilon <= 8"
[ "$epochs" -eq $((max_steps / 100)) ] ||
  fail "stopped after $epochs epochs; dpbudget steps allows $max_steps steps, $((max_steps / 100)) epochs"
[ "$epochs" -ge 1 ] || fail "no epoch trained"
at=$(field "$("$bin" epsilon --steps $((epochs * 100)) "${run[@]}")" epsilon)
next=$(field "$("$bin" epsilon --steps $(((epochs + 1) * 100)) "${run[@]}")" epsilon)
[ "$(field "$last" epsilon)" = "$at" ] || fail "epsilon after $epochs epochs: example $(field "$last" epsilon), dpbudget epsilon $at"
[ "$(field "$last" next_epsilon)" = "$next" ] || fail "epsilon after one epoch more: example $(field "$last" next_epsilon), dpbudget epsilon $next"
python3 -c 'import sys; sys.exit(not (float(sys.argv[1]) <= 8 < float(sys.argv[2])))' "$at" "$next" ||
  fail "not the last epoch within 8: $at, then $next"
# The guide shows the example's last line as this binary prints it.
grep -qxF "# its last line: $last" "$src/docs/guide.md" ||
  fail "docs/guide.md does not show the example's last line: # its last line: $last"
allows=$(python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$max_steps")
grep -qF "allows $allows steps" "$src/docs/guide.md" ||
  fail "docs/guide.md does not say dpbudget steps allows $allows steps"
echo "ok: stopped after $epochs epochs (epsilon $at; one more would be $next)"
