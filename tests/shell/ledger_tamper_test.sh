#!/usr/bin/env bash
# ledger-verify finds a ledger changed behind dpbudget's back with the store's
# own tool, and names the entry (docs/ledger.md#verify), for an unkeyed ledger
# (SHA-256 chain) and a keyed one (HMAC-SHA-256 under --key-file). The same
# script on either store (tests/support/ledger_target.sh): the edits are the
# same SQL, run with sqlite3 on a file or with psql (as the server's
# administrator) on the ledger's rows. A ledger of 4 entries is copied for
# each case, then:
#   (a) an entry's name, or its body, is changed  -> exit 8 naming entry 2 only
#   (b) entry 2 is deleted                         -> exit 8 naming entry 3 (it
#                                                     follows a missing entry)
#   (c) entries 2 and 3 swap every column but seq  -> exit 8 naming 2 and/or 3
#   (d) the header's epsilon is changed            -> exit 8: entry 1 no longer
#                                                     chains to the header
#   (e) entry 2 is edited and the hashes of 2..4 are recomputed as the
#       documented chain computes them (SHA-256 of length-prefixed fields):
#       unkeyed, this cannot be detected from the store alone (anyone who can
#       write the rows can write a whole consistent chain): verify passes, and
#       only --head with the head printed by ledger-add before (kept
#       elsewhere) catches it; keyed, the attacker has no key and the
#       recomputed SHA-256 hashes are not the HMACs: verify fails, naming 2.
#   (f) the last entry is deleted: a chain cannot know its own end, so verify
#       passes; --head with the head printed before fails (and the previous
#       entry's head passes).
# Also: the untouched copy verifies (with and without --head), and a keyed
# ledger verified with a wrong key or no key exits 7 (unusable, not altered),
# as does an unkeyed ledger given a key.
# Needs the store's tool (sqlite3; psql); exits 77 (skipped) without it, or
# without the PostgreSQL server.
# Usage: ledger_tamper_test.sh DPBUDGET [sqlite|postgresql]
set -uo pipefail
bin=${1:?usage: ledger_tamper_test.sh DPBUDGET [sqlite|postgresql]}
store_name=${2:-sqlite}

tmp=$(mktemp -d)
# shellcheck source=tests/support/ledger_target.sh
source "$(dirname "$0")/../support/ledger_target.sh"
trap 'ledger_target_cleanup; rm -rf "$tmp"' EXIT
fail() {
  echo "ledger_tamper: FAIL: $*" >&2
  exit 1
}
[ -x "$bin" ] || fail "$bin is not an executable"
store=$store_name ledger_sql_tool
ledger_target_init "$store_name"
export LC_ALL=C

echo '{"laplace": {"scale": 1}}' >"$tmp/release.json"
head -c 32 /dev/urandom >"$tmp/key"
head -c 32 /dev/urandom >"$tmp/wrong-key"

# make KIND: a ledger with entries r1..r4; keeps each add's printed head in
# $tmp/KIND.head.N.
make_ledger() {
  local kind=$1 keyargs=() i
  [ "$kind" = keyed ] && keyargs=(--key-file "$tmp/key")
  ledger_args "$kind"
  "$bin" ledger-init "${LEDGER[@]}" --epsilon 10 --delta 1e-6 "${keyargs[@]}" \
    >/dev/null 2>"$tmp/err" || fail "$kind: ledger-init exited $?: $(cat "$tmp/err")"
  for i in 1 2 3 4; do
    "$bin" ledger-add "${LEDGER[@]}" --name "r$i" --spec "$tmp/release.json" \
      "${keyargs[@]}" --format csv >"$tmp/add.csv" 2>"$tmp/err" ||
      fail "$kind: ledger-add r$i exited $?: $(cat "$tmp/err")"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "head") c = i; next } c { print $c }' \
      "$tmp/add.csv" >"$tmp/$kind.head.$i"
    grep -Eqx '[0-9a-f]{64}' "$tmp/$kind.head.$i" ||
      fail "$kind: ledger-add r$i printed no head: $(cat "$tmp/add.csv")"
  done
}

# verify KIND LEDGER [ARGS...]: runs ledger-verify on the ledger named LEDGER
# (with the key for keyed); sets $rc, stderr in $tmp/verify.err.
verify() {
  local kind=$1 keyargs=()
  ledger_args "$2"
  shift 2
  [ "$kind" = keyed ] && keyargs=(--key-file "$tmp/key")
  "$bin" ledger-verify "${LEDGER[@]}" "${keyargs[@]}" "$@" >"$tmp/verify.out" 2>"$tmp/verify.err"
  rc=$?
}

# named: the entries the last verify named as altered, sorted, space-separated.
named() {
  sed -n "s/^dpbudget: ledger altered: entry \([0-9]*\) .*/\1/p" "$tmp/verify.err" | sort -nu | tr '\n' ' ' | sed 's/ $//'
}

# expect_altered WHAT: exit 8 and every stderr line a 'ledger altered' line.
expect_altered() {
  [ "$rc" = 8 ] || fail "$1: ledger-verify exited $rc, expected 8 (altered); stderr: $(cat "$tmp/verify.err")"
  if grep -v '^dpbudget: ledger altered: ' "$tmp/verify.err" | grep -qv 'warning'; then
    fail "$1: ledger-verify wrote something other than 'ledger altered' lines: $(cat "$tmp/verify.err")"
  fi
}
expect_ok() {
  [ "$rc" = 0 ] || fail "$1: ledger-verify exited $rc, expected 0; stderr: $(cat "$tmp/verify.err")"
}

# copy KIND CASE: a fresh copy of KIND's ledger for one case; prints its name.
copy() {
  ledger_copy "$1" "$1.$2" && echo "$1.$2"
}

# rehash LEDGER FROM: recomputes, as an attacker without a key would, the
# SHA-256 chain from entry FROM to the last: each entry's prev_hash is the
# hash of the one before, its hash SHA-256 of the fields "len:value" (len in
# bytes) of "dpbudget-ledger-entry", seq, kind, name, recorded_at,
# recorded_by, body, note, prev_hash (src/store/ledger_chain.cpp).
rehash() {
  local ledger=$1 from=$2 last seq msg h
  # A field's length in bytes: SQLite's length() of the text as a blob,
  # PostgreSQL's octet_length().
  local len='length(CAST(%s AS BLOB))'
  [ "$store" = postgresql ] && len='octet_length(%s)'
  local fields='' f
  for f in kind name recorded_at recorded_by body note prev_hash; do
    # shellcheck disable=SC2059
    fields+=" || $(printf "$len" "$f") || ':' || $f"
  done
  last=$(ledger_sql "$ledger" 'SELECT max(seq) FROM @entries WHERE @this')
  for ((seq = from; seq <= last; seq++)); do
    if ((seq > 1)); then
      ledger_sql "$ledger" "UPDATE @entries SET prev_hash = (SELECT hash FROM @entries
        WHERE @this AND seq = $((seq - 1))) WHERE @this AND seq = $seq"
    fi
    msg=$(ledger_sql "$ledger" "SELECT '21:dpbudget-ledger-entry'
      || length(CAST(seq AS TEXT)) || ':' || seq $fields FROM @entries WHERE @this AND seq = $seq")
    h=$(printf '%s' "$msg" | sha256sum | cut -d' ' -f1)
    ledger_sql "$ledger" "UPDATE @entries SET hash = '$h' WHERE @this AND seq = $seq"
  done
}

sql() { ledger_sql "$1" "$2" >/dev/null; }

for kind in unkeyed keyed; do
  make_ledger "$kind"
  head4=$(cat "$tmp/$kind.head.4")
  head3=$(cat "$tmp/$kind.head.3")

  # The untouched ledger verifies, with and without its head.
  f=$(copy "$kind" untouched)
  verify "$kind" "$f"
  expect_ok "$kind, untouched"
  verify "$kind" "$f" --head "$head4"
  expect_ok "$kind, untouched, --head of entry 4"
  echo "ok: $kind: the untouched ledger verifies, with and without --head"

  # (a) an entry's name changed; then its body.
  f=$(copy "$kind" name)
  sql "$f" "UPDATE @entries SET name = 'x' WHERE @this AND seq = 2"
  verify "$kind" "$f"
  expect_altered "$kind, (a) name of entry 2 changed"
  [ "$(named)" = 2 ] || fail "$kind, (a) name changed: verify named entries '$(named)', expected only 2: $(cat "$tmp/verify.err")"
  grep -q "entry 2 ('x'): its hash does not match its content" "$tmp/verify.err" ||
    fail "$kind, (a) name changed: no 'hash does not match its content' for entry 2: $(cat "$tmp/verify.err")"
  f=$(copy "$kind" body)
  sql "$f" "UPDATE @entries SET body = replace(body, '\"scale\":1.0', '\"scale\":2.0') WHERE @this AND seq = 2"
  [ "$(ledger_sql "$f" "SELECT count(*) FROM @entries WHERE @this AND body LIKE '%\"scale\":2.0%'")" = 1 ] ||
    fail "$kind, (a) body: the edit did not take (the body's form changed?): $(ledger_sql "$f" 'SELECT body FROM @entries WHERE @this AND seq = 2')"
  verify "$kind" "$f"
  expect_altered "$kind, (a) body of entry 2 changed"
  [ "$(named)" = 2 ] || fail "$kind, (a) body changed: verify named entries '$(named)', expected only 2: $(cat "$tmp/verify.err")"
  echo "ok: $kind: (a) a changed name or body: exit 8, entry 2 named"

  # (b) entry 2 deleted.
  f=$(copy "$kind" delete)
  sql "$f" "DELETE FROM @entries WHERE @this AND seq = 2"
  verify "$kind" "$f"
  expect_altered "$kind, (b) entry 2 deleted"
  [ "$(named)" = 3 ] || fail "$kind, (b) entry 2 deleted: verify named entries '$(named)', expected only 3: $(cat "$tmp/verify.err")"
  grep -q "entry 3 .*missing" "$tmp/verify.err" ||
    fail "$kind, (b) entry 2 deleted: entry 3 is not said to follow a missing entry: $(cat "$tmp/verify.err")"
  echo "ok: $kind: (b) a deleted entry: exit 8, entry 3 named as following a missing one"

  # (c) entries 2 and 3 swap their contents (every column but seq).
  f=$(copy "$kind" swap)
  sql "$f" "CREATE TEMP TABLE t AS SELECT * FROM @entries WHERE @this AND seq IN (2, 3);
    UPDATE @entries SET (kind, name, recorded_at, recorded_by, body, note, prev_hash, hash) =
      (SELECT kind, name, recorded_at, recorded_by, body, note, prev_hash, hash FROM t
       WHERE t.seq = 5 - @entries.seq) WHERE @this AND seq IN (2, 3);"
  [ "$(ledger_sql "$f" 'SELECT name FROM @entries WHERE @this ORDER BY seq' | tr '\n' ' ')" = "r1 r3 r2 r4 " ] ||
    fail "$kind, (c): the swap did not take"
  verify "$kind" "$f"
  expect_altered "$kind, (c) entries 2 and 3 swapped"
  case " $(named) " in
    *" 2 "* | *" 3 "*) ;;
    *) fail "$kind, (c) swap: verify named entries '$(named)', neither 2 nor 3: $(cat "$tmp/verify.err")" ;;
  esac
  case " $(named) " in *" 1 "*) fail "$kind, (c) swap: verify blames the untouched entry 1" ;; esac
  echo "ok: $kind: (c) two entries swapped: exit 8, entries $(named) named"

  # (d) the budget in the header changed.
  f=$(copy "$kind" header)
  sql "$f" "UPDATE @header SET value = '100' WHERE @this AND name = 'epsilon'"
  verify "$kind" "$f"
  expect_altered "$kind, (d) header epsilon changed"
  [ "$(named)" = 1 ] || fail "$kind, (d) header changed: verify named entries '$(named)', expected only 1: $(cat "$tmp/verify.err")"
  grep -q "entry 1 .*header" "$tmp/verify.err" ||
    fail "$kind, (d) header changed: entry 1 is not said to no longer chain to the header: $(cat "$tmp/verify.err")"
  echo "ok: $kind: (d) the header's epsilon changed: exit 8, entry 1 no longer chains to the header"

  # (e) entry 2 edited and the chain from it recomputed with SHA-256.
  f=$(copy "$kind" rehash)
  sql "$f" "UPDATE @entries SET name = 'x' WHERE @this AND seq = 2"
  rehash "$f" 2
  verify "$kind" "$f"
  if [ "$kind" = unkeyed ]; then
    # A SHA-256 chain is public arithmetic: whoever can write the file can
    # write a whole new consistent chain, and nothing in the file can tell.
    # Only an anchor kept outside the file (the head ledger-add printed) can.
    expect_ok "$kind, (e) edited and rehashed (the documented limit of an unkeyed chain)"
    verify "$kind" "$f" --head "$head4"
    expect_altered "$kind, (e) edited and rehashed, --head of entry 4 as printed before"
    grep -q "does not contain --head" "$tmp/verify.err" ||
      fail "$kind, (e): verify --head does not say the chain misses the head: $(cat "$tmp/verify.err")"
    echo "ok: $kind: (e) an edit with the chain recomputed passes verify alone (no outside anchor) and fails --head (exit 8)"
  else
    # Without the key, the attacker's hashes are not the HMACs.
    expect_altered "$kind, (e) edited and rehashed without the key"
    case " $(named) " in
      *" 2 "*) ;;
      *) fail "$kind, (e): verify named entries '$(named)', not 2: $(cat "$tmp/verify.err")" ;;
    esac
    echo "ok: $kind: (e) an edit with the chain recomputed without the key: exit 8, entry 2 named"
  fi

  # (f) the last entry deleted.
  f=$(copy "$kind" last)
  sql "$f" "DELETE FROM @entries WHERE @this AND seq = 4"
  # A chain cannot know its own end: entries 1..3 are a valid chain.
  verify "$kind" "$f"
  expect_ok "$kind, (f) last entry deleted, no --head (a chain cannot know its end)"
  verify "$kind" "$f" --head "$head4"
  expect_altered "$kind, (f) last entry deleted, --head of entry 4"
  verify "$kind" "$f" --head "$head3"
  expect_ok "$kind, (f) last entry deleted, --head of entry 3 (where it now ends)"
  echo "ok: $kind: (f) the last entry deleted: verify passes alone, fails (exit 8) with the earlier --head"
done

# Keys: a wrong key or none on a keyed ledger, a key on an unkeyed one: exit
# 7 (the ledger cannot be used so), not 8 (it is not altered).
ledger_args keyed
"$bin" ledger-verify "${LEDGER[@]}" --key-file "$tmp/wrong-key" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 7 ] || fail "keyed ledger, wrong key: ledger-verify exited $rc, expected 7: $(cat "$tmp/err")"
"$bin" ledger-verify "${LEDGER[@]}" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 7 ] || fail "keyed ledger, no key: ledger-verify exited $rc, expected 7: $(cat "$tmp/err")"
"$bin" ledger-add "${LEDGER[@]}" --name r5 --spec "$tmp/release.json" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 7 ] || fail "keyed ledger, ledger-add without the key exited $rc, expected 7: $(cat "$tmp/err")"
[ "$(ledger_sql keyed 'SELECT count(*) FROM @entries WHERE @this')" = 4 ] ||
  fail "keyed ledger: an add without the key wrote an entry"
ledger_args unkeyed
"$bin" ledger-verify "${LEDGER[@]}" --key-file "$tmp/key" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 7 ] || fail "unkeyed ledger, a key: ledger-verify exited $rc, expected 7: $(cat "$tmp/err")"
echo "ok: $store: a keyed ledger with a wrong key or none, or an unkeyed one with a key: exit 7; no write without the key"
