#!/usr/bin/env bash
# A ledger-add that runs out of room (a full disk, simulated with a file-size
# limit that the write of the new entry crosses) fails with one line and exit
# status 7, nothing on stdout, and leaves the ledger byte for byte as it was:
# verified, and taking the same entry once there is room (docs/ledger.md#store).
# SQLite only, unlike the other ledger shell tests (tests/support/ledger_target.sh):
# the disk that fills is under the client's file; a server's disk is the
# server's, and a write it cannot make reaches the client as any other failed
# transaction, which the PostgreSQL store's fault tests cover.
# Usage: ledger_full_disk_test.sh DPBUDGET
set -uo pipefail
bin=${1:?usage: ledger_full_disk_test.sh DPBUDGET}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 2
fail() {
  echo "ledger_full_disk_test: $1" >&2
  exit 1
}

"$bin" ledger-init --ledger f.ledger --epsilon 100 --delta 1e-6 >/dev/null || fail "ledger-init failed"
for i in $(seq 1 20); do
  "$bin" ledger-add --ledger f.ledger --name "r$i" -q 0.001 --sigma 2 --steps 100 >/dev/null ||
    fail "ledger-add r$i failed"
done
before=$(sha256sum f.ledger)
size=$(stat -c %s f.ledger)
# A note of 9,000 bytes needs new pages: the file may not grow past its size
# now (ulimit -f counts 1024-byte blocks; SIGXFSZ ignored, so the write fails
# with EFBIG as a full disk fails with ENOSPC).
note=$(head -c 9000 /dev/zero | tr '\0' x)
limit=$(((size + 1023) / 1024))
(
  trap '' XFSZ
  ulimit -f "$limit"
  "$bin" ledger-add --ledger f.ledger --name big --note "$note" -q 0.001 --sigma 2 --steps 100 \
    >out 2>err
  echo $? >status
)
status=$(cat status)
[ "$status" = 7 ] || fail "exit status $status, expected 7 (stderr: $(cat err))"
[ ! -s out ] || fail "stdout not empty: $(cat out)"
[ "$(wc -l <err)" = 1 ] || fail "expected one line on stderr, got: $(cat err)"
grep -q '^dpbudget: error: f.ledger: cannot write' err || fail "unexpected message: $(cat err)"
[ "$(sha256sum f.ledger)" = "$before" ] || fail "the ledger changed"
[ ! -e f.ledger-journal ] || fail "a journal was left beside the ledger"
"$bin" ledger-verify --ledger f.ledger >/dev/null || fail "ledger-verify failed after the full disk"
# With room again, the same entry goes in as entry 21.
"$bin" ledger-add --ledger f.ledger --name big --note "$note" -q 0.001 --sigma 2 --steps 100 \
  --format csv >out || fail "ledger-add with room failed"
grep -q ',21,' out || fail "expected entry 21: $(cat out)"
"$bin" ledger-verify --ledger f.ledger >/dev/null || fail "ledger-verify failed at the end"
echo "ok: a full disk left the ledger as it was ($(cat err))"
