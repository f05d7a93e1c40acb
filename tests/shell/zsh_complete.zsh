# Prints, for each typed command line in turn, the completions zsh's
# completion system offers for it (one per line, sorted), then a line --end--;
# completions/_dpbudget is on $fpath.
# Drives an interactive zsh under a pseudo-terminal (zsh/zpty): the typed text
# and a TAB go to its line editor, which runs compsys's real complete-word
# widget; compadd is wrapped to record the matches it is given. One zsh runs
# every case: the line is emptied (^U) before each.
# usage: zsh -f zsh_complete.zsh COMPLETIONS_DIR ZCOMPDUMP 'dpbudget eps' ...
# Exit status 3-5 when zsh could not be driven (the message says why).
zmodload zsh/zpty || { print -u2 "zsh_complete: no zsh/zpty module"; exit 3 }
compdir=$1 dump=$2
shift 2
tmp=$(mktemp -d) || exit 3
cap=$tmp/capture init=$tmp/init.zsh
# Each wait polls this often, this many times: 10 s in all, far above the
# ~0.1 s a completion takes with a warm compinit dump (1 s without one).
poll_interval=0.02 polls=500

cat >$init <<INIT
PS1='' RPS1='' PROMPT_EOL_MARK=''
fpath=(${(q)compdir} \$fpath)
autoload -Uz compinit && compinit -u -d ${(q)dump}
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
# Record every match that would be offered, then add it as usual. Calls that
# only query (-O, -A, -D: _describe and _arguments sort matches that way)
# pass through untouched.
compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "\$@"
    return
  fi
  local -a __hits
  builtin compadd -A __hits "\$@"
  (( \$#__hits )) && print -rl -- \$__hits >>${(q)cap}
  builtin compadd "\$@"
}
_zsh_complete_done() { print -r -- '--done--' >>${(q)cap} }
# compsys runs comppostfuncs once and empties it: set again for every TAB.
_zsh_complete_tab() { comppostfuncs=(_zsh_complete_done); zle complete-word }
zle -N _zsh_complete_tab
bindkey -e
bindkey '^I' _zsh_complete_tab
# No listing of ambiguous matches (they are recorded above): a long list would
# stop at "do you wish to see all N possibilities?" and eat the next key.
unsetopt autolist listambiguous
print -r -- '--ready--' >${(q)cap}
INIT

wait_for() {  # wait_for LINE: until the capture file holds LINE
  local i junk
  for i in {1..$polls}; do
    [[ -f $cap ]] && grep -qx -- $1 $cap && return 0
    zpty -r -t z junk 2>/dev/null  # keep the terminal's output drained
    sleep $poll_interval
  done
  return 1
}

zpty -b z zsh -f -i
zpty -w z "source ${(q)init}"
if ! wait_for --ready--; then
  print -u2 "zsh_complete: the interactive zsh did not start"
  zpty -d z; rm -rf $tmp; exit 4
fi
: >$cap
for typed in "$@"; do
  zpty -w -n z $'\C-u\C-u'"$typed"$'\t'
  if ! wait_for --done--; then
    print -u2 "zsh_complete: no completion ran for '$typed'"
    zpty -d z; rm -rf $tmp; exit 5
  fi
  grep -vx -- --done-- $cap | sort -u
  print -r -- --end--
  : >$cap
done
zpty -d z
rm -rf $tmp
