#!/usr/bin/env bash
# zsh and fish complete dpbudget's verbs, flags and enumerated values with the
# committed completion files, as each shell does for a user:
#   zsh:  zsh_complete.zsh types each case into an interactive zsh's line
#         editor under a pseudo-terminal (zsh/zpty) and presses TAB;
#   fish: fish's own completion entry point, `complete -C 'typed text'`, with
#         completions/dpbudget.fish sourced.
# (The bash file is driven by completions_test.sh.)
# usage: completions_shell_test.sh zsh|fish DPBUDGET SOURCE_DIR
# Exit 77 (CTest: skipped) when the shell is not installed; CI installs both.
set -euo pipefail
if [[ $# -ne 3 || ! $1 =~ ^(zsh|fish)$ ]]; then
  echo "usage: completions_shell_test.sh zsh|fish DPBUDGET SOURCE_DIR" >&2
  exit 2
fi
shell=$1
bin=$2
src=$3
if ! command -v "$shell" >/dev/null; then
  echo "SKIP: $shell is not installed (apt-get install -y $shell; .ci/run installs it)" >&2
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=$work/files  # the working directory: file-name completion finds curve.svg
mkdir -p "$files"
: >"$files/curve.svg"

# Every case is collected first, then one shell session completes them all
# (a shell started per case was most of the test's time: ~0.15 s each). The
# wanted and offered completions of every case become sets in one sort at the
# end (a sort and its pipe per case was most of what was left: ~1,100
# processes).
cases=() wants=()
expect() {  # expect 'typed' 'wanted completions, separated by spaces or newlines, any order'
  cases+=("$1")
  wants+=("$2")
}
as_sets() {  # lines "CASE<TAB>ITEM" on stdin -> line i: case i's distinct items, sorted, each followed by a space
  LC_ALL=C sort -u | awk -F'\t' -v n="${#cases[@]}" \
    '$2 != "" {set[$1] = set[$1] $2 " "} END {for (i = 0; i < n; i++) print set[i]}'
}
offered_all() {  # each case's completions, one per line, then a line --end--
  case $shell in
    zsh)
      (cd "$files" && zsh -f "$src/tests/shell/zsh_complete.zsh" "$src/completions" \
        "$work/zcompdump" "${cases[@]}" </dev/null) ;;
    fish)
      # shellcheck disable=SC2016  # $argv is fish's, expanded by fish
      (cd "$files" && fish --no-config -c \
        'source $argv[1]; for typed in $argv[2..-1]; complete -C $typed; echo -- --end--; end' \
        "$src/completions/dpbudget.fish" "${cases[@]}" </dev/null | cut -f1) ;;
  esac
}
run_cases() {  # run_cases DPBUDGET: collects every case (expect)
  local list verb flag values
  list=$("$1" completions list)
  # Verbs.
  expect 'dpbudget eps' 'epsilon'
  expect 'dpbudget sig' 'sigma'
  expect 'dpbudget ' "$(awk -F'\t' '$1 != "" {print $1}' <<<"$list" | sort -u)"
  expect 'dpbudget nosuchverb --' ''
  # Flags: a prefix, a flag after values, and every long flag of every verb.
  expect 'dpbudget --vers' '--version'
  expect 'dpbudget epsilon --acco' '--accountant'
  expect 'dpbudget epsilon -q 0.01 --conv' '--conversion'
  expect 'dpbudget gaussian --noise-' '--noise-multiplier --noise-sd --noise-std'
  expect 'dpbudget plot --lin' '--linear-y'
  expect 'dpbudget eve' 'events'
  expect 'dpbudget epsilon --neigh' '--neighbouring'
  expect 'dpbudget delta --neighbouring replace-' 'replace-one replace-special'
  while read -r verb; do
    expect "dpbudget $verb --" "$(awk -F'\t' -v v="$verb" '$1 == v && $2 ~ /^--/ {print $2}' \
      <<<"$list")"
  done < <(awk -F'\t' '$1 != "" {print $1}' <<<"$list" | sort -u)
  # Enumerated values: every flag that has them, for every verb; a prefix.
  while IFS=$'\t' read -r verb flag values; do
    expect "dpbudget $verb $flag " "${values//,/ }"
  done < <(awk -F'\t' '$1 != "" && $2 ~ /^--/ && $3 ~ /,/' <<<"$list")
  expect 'dpbudget epsilon --accountant g' 'gdp'
  expect 'dpbudget delta --format j' 'json'
  expect 'dpbudget sigma --conversion cl' 'classic'
  # A value with no fixed set offers nothing; a file flag offers files.
  expect 'dpbudget epsilon --delta ' ''
  expect 'dpbudget plot -o cur' 'curve.svg'
}

run_cases "$bin"
# Each case's wanted items (split at spaces and newlines), one "CASE<TAB>ITEM"
# line each.
wanted_items() {
  local i item items
  for i in "${!wants[@]}"; do
    IFS=$' \n' read -r -d '' -a items <<<"${wants[i]}" || true
    for item in ${items[@]+"${items[@]}"}; do printf '%s\t%s\n' "$i" "$item"; done
  done
}
# The shell's offers, one per line, each case ending with a line --end--.
offered_items() {
  local i=0 line
  while IFS= read -r line; do
    if [[ $line == --end-- ]]; then
      i=$((i + 1))
      printf '%s\n' "$i" >&3
    else
      printf '%s\t%s\n' "$i" "$line"
    fi
  done < <(offered_all || echo "(the $shell session failed)")
}
want=() got=()
mapfile -t want < <(wanted_items | as_sets)
mapfile -t got < <(offered_items 3>"$work/ended" | as_sets)
ended=$(tail -n 1 "$work/ended")
ended=${ended:-0}  # none ended
if ((ended != ${#cases[@]})); then
  echo "FAIL: $shell completed $ended of ${#cases[@]} cases" >&2
  exit 1
fi
fail=0
for i in "${!cases[@]}"; do
  if [[ ${got[i]} != "${want[i]}" ]]; then
    echo "FAIL: '${cases[i]}<TAB>' offered '${got[i]}', expected '${want[i]}'" >&2
    fail=$((fail + 1))
  else
    echo "ok: '${cases[i]}<TAB>' -> '${got[i]}'"
  fi
done
if ((fail)); then
  echo "FAIL: $fail $shell completion case(s)" >&2
  exit 1
fi
