#!/usr/bin/env bash
# The committed completions are exactly what the parser generates, and the
# bash one completes verbs, flags and flag values when bash drives it.
# usage: completions_test.sh DPBUDGET SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
fail=0

for shell in bash zsh fish; do
  case $shell in
    bash) file=$src/completions/dpbudget.bash ;;
    zsh) file=$src/completions/_dpbudget ;;
    fish) file=$src/completions/dpbudget.fish ;;
  esac
  if ! diff -u "$file" <("$bin" completions "$shell"); then
    echo "FAIL: $file is stale: regenerate with '$bin completions $shell > $file'" >&2
    fail=1
  fi
done

# Drive the bash completion as bash would: COMP_WORDS / COMP_CWORD, then the
# function registered with `complete`.
# shellcheck source=/dev/null
source "$src/completions/dpbudget.bash"
func=$(complete -p dpbudget | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
if [[ -z $func ]]; then
  echo "FAIL: completions/dpbudget.bash registers no function for dpbudget" >&2
  exit 1
fi

expect() {  # expect 'what the user typed' 'expected replies'
  local typed=$1 want=$2
  read -r -a COMP_WORDS <<<"$typed"
  [[ $typed == *' ' ]] && COMP_WORDS+=('')
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  "$func" dpbudget "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  local got="${COMPREPLY[*]:-}"
  if [[ $got != "$want" ]]; then
    echo "FAIL: '$typed<TAB>' completed to '$got', expected '$want'" >&2
    fail=1
  else
    echo "ok: '$typed<TAB>' -> '$got'"
  fi
}

expect 'dpbudget eps' 'epsilon'
expect 'dpbudget sig' 'sigma'
expect 'dpbudget --vers' '--version'
expect 'dpbudget epsilon --acco' '--accountant'
expect 'dpbudget epsilon -q 0.01 --conv' '--conversion'
expect 'dpbudget epsilon --accountant ' "$("$bin" completions list |
  awk -F'\t' '$1 == "epsilon" && $2 == "--accountant" {gsub(",", " ", $3); print $3}')"
expect 'dpbudget epsilon --accountant g' 'gdp'
expect 'dpbudget delta --format j' 'json'
expect 'dpbudget epsilon --format = c' 'csv'
expect 'dpbudget sigma --conversion cl' 'classic'
expect 'dpbudget epsilon --delta ' ''
expect 'dpbudget nosuchverb --' ''
expect 'dpbudget eve' 'events'
expect 'dpbudget events --w' '--wide'
expect 'dpbudget epsilon --neigh' '--neighbouring'
expect 'dpbudget delta --neighbouring replace-' 'replace-one replace-special'

exit $fail
