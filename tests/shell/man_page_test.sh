#!/usr/bin/env bash
# The committed man page is exactly what the parser generates from its
# template: its flag lists, each verb's summary and examples come from the
# parser (src/cli/verbs/man_page.hpp), so a flag whose --help changed, a flag
# added or removed, fails here until the page is regenerated.
# usage: man_page_test.sh DPBUDGET SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
page=$src/man/dpbudget.1
template=$src/man/dpbudget.1.in

generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
if ! "$bin" completions man "$template" >"$generated"; then
  echo "FAIL: '$bin completions man $template' failed (see above)" >&2
  exit 1
fi
if ! diff -u "$page" "$generated"; then
  echo "FAIL: $page is not what the parser and $template make:" >&2
  echo "  edit the prose in man/dpbudget.1.in (never man/dpbudget.1), then regenerate with" >&2
  echo "  ./build/dpbudget completions man man/dpbudget.1.in > man/dpbudget.1" >&2
  exit 1
fi
echo "ok: $page is generated from $template"
