# shellcheck shell=bash
# The completion cases every shell must pass (sourced by the zsh and fish
# tests; the bash test drives its own function). The caller defines
#   offered 'typed text'   -> the completions offered, one per line,
# run in a directory holding curve.svg (for file-name completion).
# `run_cases DPBUDGET` checks them all and sets $fail to the failures.

fail=0

expect() {  # expect 'typed' 'wanted completions, space separated, any order'
  local typed=$1 want got
  want=$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -u | tr '\n' ' ')
  got=$(offered "$typed" | sort -u | tr '\n' ' ') || got="(failed)"
  if [[ $got != "$want" ]]; then
    echo "FAIL: '$typed<TAB>' offered '$got', expected '$want'" >&2
    fail=$((fail + 1))
  else
    echo "ok: '$typed<TAB>' -> '$got'"
  fi
}

run_cases() {
  local list verb flag values
  list=$("$1" completions list)
  # Verbs.
  expect 'dpbudget eps' 'epsilon'
  expect 'dpbudget sig' 'sigma'
  expect 'dpbudget ' "$(awk -F'\t' '$1 != "" {print $1}' <<<"$list" | sort -u)"
  expect 'dpbudget nosuchverb --' ''
  # Flags: a prefix, a flag after values, and every long flag of every verb.
  expect 'dpbudget --vers' '--version'
  expect 'dpbudget epsilon --acc' '--accountant'
  expect 'dpbudget epsilon -q 0.01 --conv' '--conversion'
  expect 'dpbudget gaussian --noise-' '--noise-multiplier --noise-sd'
  expect 'dpbudget plot --lin' '--linear-y'
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
