#!/usr/bin/env bash
# zsh completes dpbudget's verbs, flags and enumerated values with
# completions/_dpbudget, as an interactive zsh does: zsh_complete.zsh types
# each case into zsh's line editor under a pseudo-terminal and presses TAB.
# usage: completions_zsh_test.sh DPBUDGET SOURCE_DIR
# Exit 77 (CTest: skipped) when zsh is not installed; CI installs it.
set -euo pipefail
bin=$1
src=$2
if ! command -v zsh >/dev/null; then
  echo "SKIP: zsh is not installed (apt-get install -y zsh; .ci/run installs it)" >&2
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=$work/files
mkdir -p "$files"
: >"$files/curve.svg"

# shellcheck disable=SC2317  # called by completion_cases.sh
offered() {  # zsh's completions for the typed text, one per line
  (cd "$files" && zsh -f "$src/tests/shell/zsh_complete.zsh" "$src/completions" \
    "$work/zcompdump" "$1" </dev/null)
}

# shellcheck source=tests/shell/completion_cases.sh
source "$src/tests/shell/completion_cases.sh"
run_cases "$bin"
if ((fail)); then
  echo "FAIL: $fail zsh completion case(s)" >&2
  exit 1
fi
