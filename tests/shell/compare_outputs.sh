#!/usr/bin/env bash
# Not a test: a check for a change that must leave the numbers unchanged.
# compare_outputs.sh OLD_BINARY NEW_BINARY runs a fixed set of commands with
# --format json through both and prints, per command, SAME or DIFF with the
# numeric fields that differ (fields only one side has are ignored: JSON only
# gains fields; epsilon_lower may be dropped where a lower end is only the
# accuracy), and BYTES when the two outputs are byte-identical (what a
# refactoring must show). Build the old binary from a worktree of the old commit.
OLD=$1 NEW=$2
cmds=(
"epsilon -q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5 --accountant all --format json"
"epsilon -q 0.01 --sigma 1 --steps 10000 --delta 1e-5,1e-8 --accountant pld --format json"
"delta -q 0.01 --sigma 1 --steps 1000 --epsilon 1,2 --accountant all --format json"
"epsilon --sampling shuffle --dataset-size 60000 --batch-size 600 --sigma 1.1 --epochs 10 --delta 1e-5 --accountant all --format json"
"epsilon --sampling balls-in-bins --dataset-size 1000 --batch-size 100 --sigma 1 --epochs 2 --delta 1e-5 --accountant rdp,pld --format json"
"epsilon --sampling balls-in-bins --participations 2 --sigma 1 --dataset-size 5 --batch-size 1 --epochs 1 --delta 0.0235 --accountant pld --format json"
"epsilon -q 0.01 --sigma 1.1 --steps 1000 --records-per-user 3 --delta 1e-5 --accountant rdp,pld --format json"
"epsilon --sampling without-replacement --dataset-size 10000 --batch-size 100 --sigma 1.1 --epochs 2 --delta 1e-5 --format json"
"epsilon -q 1 --sigma 1 --steps 1 --delta 1e-5 --accountant all --format json"
"sigma -q 0.01 --steps 1000 --epsilon 2 --delta 1e-5 --accountant rdp,pld --format json"
"steps -q 0.01 --sigma 1 --epsilon 2 --delta 1e-5 --format json"
"risk -q 0.01 --sigma 1 --steps 1000 --accountant all --format json"
"sweep --sigma 0.8,1.1 -q 0.01,0.02 --steps 1000,5000 --delta 1e-5 --accountant rdp,pld --format json"
"epsilon --dataset-size 60000 --batch-size 256 --accumulation-steps 4 --sigma 1 --epochs 3 --last-batch drop --delta 1e-5 --format json"
"sampling-rate --sigma 1 --steps 1000 --epsilon 3 --delta 1e-5 --format json"
"report --sigma 1.1 -q 0.01 --steps 10000 --delta 1e-5 --format json"
"gdp --mu 1 --delta 1e-5 --format json"
"compose --epsilon 0.1 --delta 1e-6 --count 100 --target-delta 1e-5 --format json"
"mf-sensitivity --strategy banded --steps 128 --bands 4 --participation min-sep --min-sep 4 --participations 8 --format json"
"mf-epsilon --strategy banded --steps 10 --bands 4 --participation cyclic-poisson -q 0.05 --sigma 1.1 --delta 1e-6 --format json"
"mf-epsilon --strategy sqrt --steps 100 --sigma 5 --delta 1e-6 --accountant all --format json"
"mf-sigma --strategy tree --steps 100 --epsilon 8 --delta 1e-6 --format json"
"mf-error --strategy identity,tree,sqrt,banded --steps 200 --bands 1,2,4 --epsilon 8 --delta 1e-6 --format json"
"mf-error --strategy identity,banded --steps 64 --bands 1,2,4 --participation cyclic-poisson --batch-fraction 0.01 --epsilon 8 --delta 1e-6 --format json"
"sweep --sigma 0.8,1.1 -q 0.01 --steps 1000,2000 --delta 1e-5 --max-epsilon 2 --format csv"
"sweep --sigma 0.8,1.1 -q 0.01 --steps 1000,2000 --delta 1e-5 --format jsonl"
"sweep --sigma 0.8,1.1 -q 0.01 --steps 1000,2000 --delta 1e-5 --shard 2/2 --format csv"
"sweep --sigma 0.8:1.2:0.1 -q 0.01 --steps 100 --delta 1e-5 --solve sigma --epsilon 2 --format csv"
)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for c in "${cmds[@]}"; do
  $OLD $c >"$tmp/old.json" 2>/dev/null; $NEW $c >"$tmp/new.json" 2>/dev/null
  if cmp -s "$tmp/old.json" "$tmp/new.json"; then echo "BYTES ${c:0:90}"; continue; fi
  case $c in *"--format json"*) ;; *) echo "DIFF ${c:0:90} (not JSON: bytes differ)"; continue ;; esac
  python3 - "$c" "$tmp/old.json" "$tmp/new.json" <<'PY'
import json,sys
o=json.load(open(sys.argv[2])); n=json.load(open(sys.argv[3]))
bad=[]
ro=o['results']; rn=n['results']
# match rows by (accountant,bound,delta/eps target, sampling)
def key(r): return (r.get('accountant'),r.get('bound'),r.get('sampling'),r.get('noise_multiplier') if 'target_epsilon' not in r else r.get('target_epsilon'),r.get('sampling_rate'),r.get('steps'),r.get('fpr'))
mn={}
for r in rn: mn.setdefault(key(r),[]).append(r)
for r in ro:
  cands=mn.get(key(r),[])
  if not cands: bad.append(('missing row',key(r))); continue
  m=cands.pop(0)
  for k,v in r.items():
    if isinstance(v,(int,float)) and not isinstance(v,bool):
      if k in ('epsilon_lower','tpr_lower','advantage_lower','delta_lower') and k not in m: continue
      if m.get(k)!=v: bad.append((k,v,m.get(k)))
print(('SAME ' if not bad else 'DIFF ')+sys.argv[1][:90], bad[:6])
PY
done
