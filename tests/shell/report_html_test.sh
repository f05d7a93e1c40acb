#!/usr/bin/env bash
# dpbudget report --format html: one self-contained page that is well-formed
# XML (xmllint), references no file or address, holds both drawings; and,
# with `render`, that headless Chromium draws it: the screenshot has ink.
# Usage: report_html_test.sh DPBUDGET [render]. `render` exits 77 (CTest:
# skipped) when Chromium is not installed (apt-get install -y chromium;
# .ci/run installs it).
set -euo pipefail
bin=$1
mode=${2:-check}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" report --sigma 1.1 --steps 1000 --dataset-size 60000 --batch-size 600 \
  --delta 1e-5 --format html -o "$tmp/report.html" 2>/dev/null
page=$tmp/report.html

if [ "$mode" = check ]; then
  xmllint --noout "$page" || fail "xmllint rejects the page"
  echo "ok: xmllint accepts the page"
  head -c 15 "$page" | grep -qx '<!DOCTYPE html>' || fail "no <!DOCTYPE html> first"
  [ "$(grep -c '<svg ' "$page")" = 2 ] || fail "expected two inline drawings"
  echo "ok: two inline SVG drawings"
  if grep -Eq '(src|href)=|url\([^#]|@import' "$page"; then fail "the page references another file"; fi
  echo "ok: no external references"
  for want in 'Privacy statement' 'Parameters' 'Membership-inference risk' 'pld' 'noise multiplier'; do
    grep -q "$want" "$page" || fail "missing: $want"
  done
  echo "ok: the sections are there"
  exit 0
fi

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "SKIP: chromium is not installed (apt-get install -y chromium; .ci/run installs it)" >&2
  exit 77
fi
# Flags: no sandbox as root, no GPU, and nothing that reaches the network.
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$tmp/profile" --window-size=1000,1400 --screenshot="$tmp/shot.png" \
  "file://$page" >"$tmp/chromium.log" 2>&1 || { cat "$tmp/chromium.log" >&2; fail "chromium failed"; }
[ -s "$tmp/shot.png" ] || fail "no screenshot"
# Decode the PNG (8-bit RGB or RGBA, filters 0-4) and count pixels that are
# not near white: a page with text, tables and two charts has plenty.
python3 - "$tmp/shot.png" <<'PY' || fail "the screenshot is blank"
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, colour = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
assert depth == 8 and colour in (2, 6), (depth, colour)
bpp = 3 if colour == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
ink = 0
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        if min(line[x], line[x + 1], line[x + 2]) < 200:
            ink += 1
    prev = line
share = ink / (w * h)
print(f"ok: {w}x{h} screenshot, {share:.1%} of pixels inked")
sys.exit(0 if share > 0.01 else 1)
PY
