#!/usr/bin/env bash
# The code cites its mathematics in docs/ (e.g. docs/pld.md#tail-window), and
# nothing cites a document outside the repository. Fails when:
#  - a citation `docs/FILE.md#ANCHOR` in src/, tests/, man/, bench/, README.md
#    or ARCHITECTURE.md, or a link `FILE.md#ANCHOR` / `#ANCHOR` inside docs/,
#    names a file that does not exist or a heading it does not have
#    (GitHub-style anchors: lower case, punctuation dropped, spaces -> '-');
#  - a docs page has two headings with the same anchor;
#  - a docs page is not listed in docs/README.md;
#  - a source file that docs/ names (src/.../x.cpp or .hpp) does not exist;
#  - the word SPEC (the external specification) appears in src/, tests/, man/,
#    bench/, README.md or ARCHITECTURE.md, other than the man page's section
#    "SPEC FILES" (about `--spec` files; not a document) and doctest's CMake
#    keyword TEST_SPEC (a test-case filter; not a document).
# usage: docs_citations_test.sh SOURCE_DIR
set -euo pipefail
export LC_ALL=C
src=$1
cd "$src"
fail=0
self=tests/shell/docs_citations_test.sh

[[ -d docs ]] || { echo "FAIL: no docs/ directory" >&2; exit 1; }

# Every page's anchors, read once (a sed, tr and grep per citation were most of
# this test's time): has["docs/PAGE.md#ANCHOR"] is set for each heading. An
# anchor is the heading's text (after 1-6 '#' and the spaces that follow) in
# lower case, with everything but letters, digits, spaces, '_' and '-' dropped
# and each space made a '-'.
declare -A has=()
for page in docs/*.md; do
  declare -A seen=()
  while IFS= read -r line || [[ -n $line ]]; do
    [[ $line =~ ^#{1,6}\ +(.*)$ ]] || continue
    anchor=${BASH_REMATCH[1],,}
    anchor=${anchor//[^a-z0-9 _-]/}
    anchor=${anchor// /-}
    if [[ -n ${seen["#$anchor"]+set} ]]; then
      echo "FAIL: $page: headings with the same anchor: $anchor" >&2
      fail=1
    fi
    seen["#$anchor"]=1
    has["$page#$anchor"]=1
  done <"$page"
  unset seen
  name=${page#docs/}
  if [[ $name != README.md ]] && ! grep -qF "($name)" docs/README.md; then
    echo "FAIL: docs/README.md does not list $name" >&2
    fail=1
  fi
done

# Does page $1 (a path under docs/) have anchor $2?
has_anchor() {
  [[ -n ${has["$1#$2"]+set} ]]
}

# Citations from the code, tests, man page and top-level documents.
cited=0
while IFS=: read -r file line cite; do
  page=${cite%%#*}
  anchor=${cite#*#}
  cited=$((cited + 1))
  if [[ ! -f $page ]]; then
    echo "FAIL: $file:$line cites $cite: no file $page" >&2
    fail=1
  elif ! has_anchor "$page" "$anchor"; then
    echo "FAIL: $file:$line cites $cite: $page has no heading with anchor #$anchor" >&2
    fail=1
  fi
done < <(grep -rnoE --exclude="$(basename "$self")" 'docs/[a-z_]+\.md#[a-z0-9_-]+' \
  src tests man bench README.md ARCHITECTURE.md || true)

# A page named without an anchor must exist too.
while IFS=: read -r file line page; do
  if [[ ! -f $page ]]; then
    echo "FAIL: $file:$line names $page, which does not exist" >&2
    fail=1
  fi
done < <(grep -rnoE --exclude="$(basename "$self")" 'docs/[a-z_]+\.md' \
  src tests man bench README.md ARCHITECTURE.md || true)

if ((cited < 50)); then
  echo "FAIL: only $cited docs/ citations found in the code: the search is broken" >&2
  fail=1
fi

# Links between the docs pages: (FILE.md#ANCHOR) and (#ANCHOR).
for page in docs/*.md; do
  while IFS=: read -r line link; do
    link=${link#(}
    link=${link%)}
    target=${link%%#*}
    anchor=${link#*#}
    [[ -z $target ]] && target=${page#docs/}
    if ! has_anchor "docs/$target" "$anchor"; then
      echo "FAIL: $page:$line links to $link: no such page or heading" >&2
      fail=1
    fi
  done < <(grep -noE '\(([a-z_]+\.md)?#[a-z0-9_-]+\)' "$page" || true)
done

# Source files the docs name.
while IFS=: read -r page line path; do
  if [[ ! -f $path ]]; then
    echo "FAIL: $page:$line names $path, which does not exist" >&2
    fail=1
  fi
done < <(grep -noE 'src/[a-z_/]+\.(cpp|hpp)' docs/*.md || true)

# No citation of the external specification.
if grep -rn --exclude="$(basename "$self")" 'SPEC' src tests man bench README.md ARCHITECTURE.md |
  grep -v -e 'SPEC FILES' -e 'TEST_SPEC "'; then
  echo "FAIL: the lines above mention SPEC: cite docs/ instead" >&2
  fail=1
fi

((fail == 0)) && echo "ok: $cited citations of docs/ resolve; no SPEC"
exit $fail
