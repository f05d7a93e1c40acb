#!/usr/bin/env bash
# The arrows of ARCHITECTURE.md, read from the includes: each folder of
# src/accounting/ includes only the folders below it, accounting includes no
# rendering or command line and does no I/O, report includes no command line.
# Fails naming each include that runs the wrong way, and each path
# ARCHITECTURE.md names that does not exist. Usage: layering_test.sh ROOT
set -uo pipefail
root=${1:-.}
cd "$root" || exit 2

# What each folder of src/accounting/ may include besides itself and
# accounting/errors.hpp (the exceptions every part throws). "interface" is
# accounting/accountant.hpp, which the accountant files themselves implement,
# and accounting/accountant_descriptor.hpp, what is known of each accountant
# (dpsgd/'s σ search reads where to start).
declare -A may_use=(
  [numerics]=""
  [events]="numerics"
  [risk]="numerics"
  [gdp]="numerics events risk"
  [mechanisms]="numerics events gdp"
  [rdp]="numerics events mechanisms risk"
  [pld]="numerics events mechanisms risk"
  [composition]="numerics events mechanisms risk"
  [dpsgd]="numerics events"
  [matrix]="numerics"
)
# The accountant files and the planners may also include the interface.
interface_users='_accountant\.(cpp|hpp)$|_planner\.(cpp|hpp)$|^src/accounting/dpsgd/'

failures=0
fail() {
  echo "layering: $1" >&2
  failures=$((failures + 1))
}

for dir in src/accounting/*/; do
  part=$(basename "$dir")
  [ -n "${may_use[$part]+set}" ] || fail "src/accounting/$part/ is not in this test's table (add it, with what it may use)"
done

for part in "${!may_use[@]}"; do
  [ -d "src/accounting/$part" ] || fail "src/accounting/$part/ is in the table but not in the tree"
  allowed=" $part ${may_use[$part]} "
  while IFS=: read -r file _ line; do
    target=$(sed -E 's/.*#include "accounting\/([^"]*)".*/\1/' <<<"$line")
    case $target in
      errors.hpp) continue ;;
      accountant.hpp | accountant_descriptor.hpp)
        grep -qE "$interface_users" <<<"$file" ||
          fail "$file includes accounting/$target (only accountant files, planners and dpsgd/ implement or use the interface)"
        continue ;;
    esac
    folder=${target%%/*}
    if [ "$folder" = "$target" ]; then
      fail "$file includes accounting/$target (the question layer above every part)"
    elif [[ $allowed != *" $folder "* ]]; then
      fail "$file includes accounting/$target ($part/ may use:${may_use[$part]:- nothing but itself})"
    fi
  done < <(grep -n '#include "accounting/' -r "src/accounting/$part" /dev/null)
done

# Layer 1 knows nothing of layers 2 and 3 and does no I/O; layer 2 nothing of layer 3.
while IFS= read -r hit; do fail "$hit (accounting is below report and cli)"; done \
  < <(grep -rnE '#include "(report|cli)/' src/accounting)
while IFS= read -r hit; do fail "$hit (accounting does no I/O)"; done \
  < <(grep -rnE '#include <(iostream|fstream|filesystem)>' src/accounting)
while IFS= read -r hit; do fail "$hit (report is below cli)"; done \
  < <(grep -rnE '#include "cli/' src/report)

# util/ (tools about no part of dpbudget) includes none of the layers, and
# report and cli may use it. A persistence layer
# (src/store/, the ledger's store: persistence only, no maths) may use util/
# and nothing above it; the command line uses it.
while IFS= read -r hit; do fail "$hit (util is below every layer)"; done \
  < <(grep -rnE '#include "(accounting|report|cli|store)/' src/util 2>/dev/null)
if [ -d src/store ]; then
  while IFS= read -r hit; do fail "$hit (store keeps records: no numerics, no rendering, no command line)"; done \
    < <(grep -rnE '#include "(accounting|report|cli)/' src/store)
fi
while IFS= read -r hit; do fail "$hit (only the command line uses the store)"; done \
  < <(grep -rnE '#include "store/' src/accounting src/report src/util 2>/dev/null)

# Inside cli/: flags/ (flag vocabularies) uses only flags/; input/ (readers)
# flags/ and input/; run/ (runners several verbs share) flags/, input/ and
# run/; verbs/ any of them; no folder but verbs/ includes a verb's file.
declare -A cli_may_use=(
  [flags]="flags"
  [input]="flags input"
  [run]="flags input run"
  [verbs]="flags input run verbs"
)
for dir in src/cli/*/; do
  part=$(basename "$dir")
  [ -n "${cli_may_use[$part]+set}" ] || fail "src/cli/$part/ is not in this test's cli table (add it, with what it may use)"
done
for part in "${!cli_may_use[@]}"; do
  allowed=" ${cli_may_use[$part]} "
  while IFS=: read -r file _ line; do
    folder=$(sed -E 's/.*#include "cli\/([^/"]*)\/.*/\1/' <<<"$line")
    [[ $allowed == *" $folder "* ]] || fail "$file includes cli/$folder/ (cli/$part/ may use: ${cli_may_use[$part]})"
  done < <(grep -rnE '#include "cli/[a-z_]+/' "src/cli/$part" /dev/null)
done

# Every verb a file of cli/verbs/ describes is one dpbudget lists: each
# `extern const VerbDescriptor kXVerb{` has its `&kXVerb` in kVerbs
# (cli/verbs.hpp). One listed but not defined fails to link; this catches the
# other way round.
while IFS= read -r name; do
  grep -qF "&$name," src/cli/verbs.hpp || fail "$name is defined in src/cli/verbs/ but not listed in kVerbs (src/cli/verbs.hpp)"
done < <(grep -rhoE 'extern const VerbDescriptor k[A-Za-z]+Verb\{' src/cli/verbs | sed -E 's/.*(k[A-Za-z]+Verb).*/\1/')

# ARCHITECTURE.md is a map: every file or folder it names exists (the
# recipes' examples, the accountant `prv`, the input `weights_input`, the
# placeholders VERB and TARGET, and the store to come, aside).
while IFS= read -r path; do
  [ -e "$path" ] || fail "ARCHITECTURE.md names $path, which does not exist"
done < <(grep -oE '`(src|tests|docs|bench|man|completions)/[A-Za-z0-9_./-]*`' ARCHITECTURE.md |
  tr -d '`' | grep -vE 'prv|VERB|weights_input|TARGET|^src/store/$' | sort -u)

if [ "$failures" -gt 0 ]; then
  echo "layering: $failures include(s) run the wrong way" >&2
  exit 1
fi
echo "layering: every include runs downward ($(grep -rc '#include "' src | awk -F: '{s += $2} END {print s}') includes read)"
