#!/usr/bin/env bash
# `cmake --install` into a temporary prefix puts the binary, the man page and
# the completions in the Debian places; `cpack -G DEB` makes a package with
# the same files that unpacks and runs.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what" >&2; fail=1; fi
}

expected_files=(
  bin/dpbudget
  share/man/man1/dpbudget.1
  share/bash-completion/completions/dpbudget
  share/zsh/vendor-completions/_dpbudget
  share/fish/vendor_completions.d/dpbudget.fish
)

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in "${expected_files[@]}"; do check "installs $f" test -s "$tmp/prefix/$f"; done
check "installed binary runs" "$tmp/prefix/bin/dpbudget" --version
check "installed man page is the source one" cmp -s "$src/man/dpbudget.1" "$tmp/prefix/share/man/man1/dpbudget.1"
check "installed bash completion is the source one" \
  cmp -s "$src/completions/dpbudget.bash" "$tmp/prefix/share/bash-completion/completions/dpbudget"

# The .deb.
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >/dev/null)
deb=$(ls "$tmp"/pkg/*.deb)
check "cpack made one .deb" test -f "$deb"
info=$(dpkg-deb -I "$deb")
check "package name" grep -q '^ Package: dpbudget$' <<<"$info"
check "maintainer" grep -q '^ Maintainer: .' <<<"$info"
# Every shared library the binary loads comes from a package it depends on;
# the default build is one static binary that opens only libcrypto (any
# ledger's hash chain) and libpq (a ledger on a server) at run time
# (src/store/libcrypto_library.hpp): it depends on libssl3 alone and
# recommends libpq5.
libs=$(ldd "$build/dpbudget" 2>&1 || true)
if grep -q 'statically linked\|not a dynamic executable' <<<"$libs"; then
  check "static binary: depends on libssl3 alone" grep -qx ' Depends: libssl3 (>= 3.0)' <<<"$info"
  check "static binary: recommends libpq5" grep -qx ' Recommends: libpq5' <<<"$info"
else
  check "depends on libc6 and FFTW" grep -q '^ Depends: .*libc6.*libfftw3-double3' <<<"$info"
  check "depends on libstdc++6" grep -q '^ Depends: .*libstdc++6' <<<"$info"
  check "depends on libssl3 (libcrypto, opened at run time)" grep -q '^ Depends: .*libssl3' <<<"$info"
  check "depends on libgcc-s1" grep -q '^ Depends: .*libgcc-s1' <<<"$info"
fi
check "description" grep -q '^ Description: differential-privacy budget calculator' <<<"$info"
contents=$(dpkg-deb -c "$deb")
for f in "${expected_files[@]}"; do check "package holds /usr/$f" grep -q "\./usr/$f\$" <<<"$contents"; done
dpkg-deb -x "$deb" "$tmp/root"
check "packaged binary runs" "$tmp/root/usr/bin/dpbudget" epsilon -q 0.01 --sigma 1.1 --steps 1000 --delta 1e-5
exit $fail
