#!/usr/bin/env bash
# No file over 600 lines and no function over 120 in src/ (issue 43): a file
# is read whole; a function from its signature's first line to its closing
# brace, lambdas and local classes included. Fails naming each offender as
# FILE:LINE with its length. Usage: size_limits_test.sh ROOT [list]; `list`
# prints every function's length instead (longest first) and always passes.
#
# Functions are found by matching braces in the source with its comments,
# strings and character literals blanked (a digit separator, as in 1'000, is
# not a literal; preprocessor lines are skipped). A brace at namespace or
# class level opens a function when the text before it, since the last `;`,
# `{` or `}` there, has a parameter list and nothing after it but qualifiers
# (const, noexcept, override, a trailing return type) or a constructor's
# member initialisers. Namespaces, classes, structs and unions are read
# through; enums, initialiser tables (`kX[] = {`) and braced variables are
# skipped whole.
set -uo pipefail
root=${1:-.}
mode=${2:-check}
cd "$root" || exit 2

max_file_lines=600
max_function_lines=120

# Named exceptions: "FILE" (its length) or "FILE:FUNCTION" (that function's,
# FUNCTION as this script names it) -> why it may be longer. Keep it empty;
# an exception that is no longer over its limit fails too.
declare -A exceptions=()

failures=0
fail() {
  echo "size_limits: $1" >&2
  failures=$((failures + 1))
}

mapfile -t files < <(find src -type f \( -name '*.cpp' -o -name '*.hpp' \) | LC_ALL=C sort)
[ "${#files[@]}" -gt 0 ] || { echo "size_limits: no source files under $root/src" >&2; exit 2; }

# One line per function: FILE<TAB>LINE<TAB>LENGTH<TAB>NAME.
functions=$(awk '
function reset_head() { head = ""; head_line = 0; parens = 0 }
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function is_word(ch) { return ch ~ /[A-Za-z0-9_]/ }
# The name of the function whose signature is h: the word before its first "(".
function name_of(h,    p, w) {
  p = index(h, "(")
  w = substr(h, 1, p - 1)
  sub(/[ \t]+$/, "", w)
  if (w ~ /operator[ \t]*$/ && substr(h, p, 2) == "()") w = w "()"
  if (match(w, /[A-Za-z0-9_:~]*operator[^A-Za-z0-9_].*$/)) w = substr(w, RSTART)
  else sub(/.*[^A-Za-z0-9_:~]/, "", w)
  gsub(/[ \t]/, "", w)
  return w == "" ? "(lambda)" : w
}
# What a brace at namespace or class level opens, from the text before it:
# "container" (read through), "function", "init" (a member initialiser of a
# constructor: the head goes on after it) or "other" (skipped whole).
function classify(h, before,    rest) {
  h = trim(h)
  if (h ~ /^(inline[ \t]+)?namespace([^A-Za-z0-9_]|$)/) return "container"
  if (h ~ /^extern[ \t]*""/) return "container"
  if (h ~ /^(template[ \t]*<.*>[ \t]*)?(class|struct|union)[ \t]/) return "container"
  if (h ~ /^(template[ \t]*<.*>[ \t]*)?enum([^A-Za-z0-9_]|$)/) return "other"
  if (h ~ /=$/ || index(h, "(") == 0) return "other"
  # A constructor: its member initialisers may be braced, its body follows a ")" or a "}".
  if (h ~ /\)[ \t]*(noexcept[ \t]*)?:([^:]|$)/) return before ~ /[)}]/ ? "function" : "init"
  rest = h
  sub(/.*\)/, "", rest)
  if (rest ~ /^[ \t]*((const|noexcept|override|final|mutable|volatile|&|&&)[ \t]*)*(->.*)?$/) return "function"
  return "other"
}
# A code character c (comments and literals already gone) at line FNR.
function code(c,    kind) {
  if (depth > 0) {  # inside a function or a skipped block: count braces only
    if (c == "{") depth++
    else if (c == "}" && --depth == 0) {
      if (kind_open == "function")
        printf "%s\t%d\t%d\t%s\n", FILENAME, start, FNR - start + 1, fname
      reset_head()
    }
    return
  }
  if (init > 0) {  # a braced member initialiser of a constructor
    if (c == "{") init++
    else if (c == "}" && --init == 0) { head = head "{}"; last = "}" }
    return
  }
  if (c == "(") parens++
  else if (c == ")") parens--
  if (parens == 0 && c == "{") {
    kind = classify(head, last)
    if (kind == "container") { reset_head(); last = c; return }
    if (kind == "init") { init = 1; return }
    depth = 1; kind_open = kind; start = head_line ? head_line : FNR; fname = name_of(trim(head))
    return
  }
  if (parens == 0 && (c == "}" || c == ";")) { reset_head(); last = c; return }
  if (head == "" && c ~ /[ \t]/) return
  if (head == "") head_line = FNR
  head = head c
  if (c !~ /[ \t]/) last = c
  if (c == ":" && trim(head) ~ /^(public|private|protected)[ \t]*:$/) reset_head()
}
BEGIN { sq = sprintf("%c", 39) }
FNR == 1 { depth = 0; init = 0; in_comment = 0; raw = ""; continued = 0; reset_head(); last = "" }
{
  line = $0
  n = length(line)
  if (!in_comment && raw == "" && (continued || line ~ /^[ \t]*#/)) {  # preprocessor
    continued = line ~ /\\$/
    next
  }
  prev = ""
  for (i = 1; i <= n; i++) {
    c = substr(line, i, 1)
    if (in_comment) {
      if (c == "*" && substr(line, i + 1, 1) == "/") { in_comment = 0; i++ }
      continue
    }
    if (raw != "") {  # inside a raw string: until )DELIM"
      if (substr(line, i, length(raw)) == raw) { i += length(raw) - 1; raw = ""; prev = "\"" }
      continue
    }
    if (c == "/" && substr(line, i + 1, 1) == "/") break
    if (c == "/" && substr(line, i + 1, 1) == "*") { in_comment = 1; i++; continue }
    if (c == "\"") {
      if (prev == "R" && (i < 3 || !is_word(substr(line, i - 2, 1)) || substr(line, 1, i - 2) ~ /(u8|[uUL])$/)) {
        p = index(substr(line, i + 1), "(")
        raw = ")" substr(line, i + 1, p - 1) "\""
        i += p
        continue
      }
      for (i++; i <= n; i++) {
        d = substr(line, i, 1)
        if (d == "\\") i++
        else if (d == "\"") break
      }
      code("\""); code("\""); prev = "\""
      continue
    }
    if (c == sq && !(is_word(prev) && number)) {  # a character literal
      for (i++; i <= n; i++) {
        d = substr(line, i, 1)
        if (d == "\\") i++
        else if (d == sq) break
      }
      code(sq); code(sq); prev = sq
      continue
    }
    if (is_word(c) && !is_word(prev) && prev != sq) number = c ~ /[0-9]/
    code(c)
    prev = c
  }
  if (head != "") head = head " "
}
' "${files[@]}")

if [ "$mode" = list ]; then
  sort -t$'\t' -k3,3nr <<<"$functions" | awk -F'\t' '{ printf "%5d  %s:%d %s\n", $3, $1, $2, $4 }'
  exit 0
fi

declare -A used=()
for file in "${files[@]}"; do
  lines=$(wc -l <"$file")
  [ "$lines" -gt "$max_file_lines" ] || continue
  if [ -n "${exceptions[$file]+set}" ]; then
    used[$file]=1
    continue
  fi
  fail "$file:1: the file is $lines lines (over $max_file_lines)"
done
counted=0
while IFS=$'\t' read -r file line length name; do
  [ -n "$file" ] || continue
  counted=$((counted + 1))
  [ "$length" -gt "$max_function_lines" ] || continue
  if [ -n "${exceptions[$file:$name]+set}" ]; then
    used[$file:$name]=1
    continue
  fi
  fail "$file:$line: $name is $length lines (over $max_function_lines)"
done <<<"$functions"
for key in "${!exceptions[@]}"; do
  [ -n "${used[$key]+set}" ] || fail "the exception $key is not over its limit: drop it from the table"
done

# A parser that finds nothing passes everything: there are hundreds of functions.
if [ "$counted" -lt 500 ]; then
  fail "only $counted functions found in ${#files[@]} files: the parser is broken"
fi
if [ "$failures" -gt 0 ]; then
  echo "size_limits: $failures file(s) or function(s) over the limits ($max_file_lines lines a file, $max_function_lines a function)" >&2
  exit 1
fi
echo "size_limits: ${#files[@]} files within $max_file_lines lines, $counted functions within $max_function_lines"
