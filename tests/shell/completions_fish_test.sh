#!/usr/bin/env bash
# fish completes dpbudget's verbs, flags and enumerated values with
# completions/dpbudget.fish: each case goes through fish's own completion
# entry point, `complete -C 'typed text'`, with the file sourced.
# usage: completions_fish_test.sh DPBUDGET SOURCE_DIR
# Exit 77 (CTest: skipped) when fish is not installed; CI installs it.
set -euo pipefail
bin=$1
src=$2
if ! command -v fish >/dev/null; then
  echo "SKIP: fish is not installed (apt-get install -y fish; .ci/run installs it)" >&2
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=$work/files
mkdir -p "$files"
: >"$files/curve.svg"

# shellcheck disable=SC2317  # called by completion_cases.sh
offered() {  # fish's completions for the typed text (the word before the tab)
  # shellcheck disable=SC2016  # $argv is fish's, expanded by fish
  (cd "$files" && fish --no-config -c 'source $argv[1]; complete -C $argv[2]' \
    "$src/completions/dpbudget.fish" "$1" </dev/null | cut -f1)
}

# shellcheck source=tests/shell/completion_cases.sh
source "$src/tests/shell/completion_cases.sh"
run_cases "$bin"
if ((fail)); then
  echo "FAIL: $fail fish completion case(s)" >&2
  exit 1
fi
