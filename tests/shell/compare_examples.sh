#!/usr/bin/env bash
# Not a test: a check that the examples of the documentation print the same
# thing after a change (of the binary, or of where an example is written).
#
#   compare_examples.sh OLD_BINARY NEW_BINARY FILE...
#       runs every dpbudget command of the Markdown FILEs through both
#       binaries and prints, per command, SAME or DIFF (stdout, stderr, exit
#       status and the files the command writes), then SKIP lines and counts;
#   compare_examples.sh --list FILE...
#       prints the commands, one a line, in the order the files hold them;
#   compare_examples.sh --digest BINARY FILE...
#       prints per command a digest of what BINARY gives, then the command:
#       `diff <(... --digest B old.md | sort) <(... --digest B new/*.md | sort)`
#       shows that moving examples between files changed none of them.
#
# What is a command: in a ```console block (or a block with `$ ` prompts),
# each `$ ` line; in a ```sh block, each line that is not a comment; a line
# ending in `\` goes on on the next. Commands that start with `dpbudget ` or
# `./build/dpbudget ` are run with bash, in a scratch directory, `dpbudget`
# being the binary, stdin empty and SLURM_ARRAY_TASK_ID=1 (a recipe uses it).
# Every file a FILE gives is there: a console block's `$ cat NAME` and the
# lines after it, and a ```json block after a line that ends in "`NAME`:"
# (each FILE in a directory of its own, files given in document order, and
# each command run on a fresh copy, so that no command sees another's output;
# a directory a command writes into, `> completions/x`, is made first).
# A command that calls dpbudget elsewhere than at its start (`parallel -k
# dpbudget ...`, `python3 ledger.py | dpbudget ...`, the set-up command) or
# holds a GitHub Actions `${{ ... }}` is listed as SKIP with the reason.
set -euo pipefail
if [[ ${1:-} == --list ]]; then
  mode=list
  shift
elif [[ ${1:-} == --digest ]]; then
  mode=digest
  old=$2
  new=$2
  shift 2
else
  mode=compare
  old=${1:?usage: compare_examples.sh OLD_BINARY NEW_BINARY FILE...}
  new=${2:?usage: compare_examples.sh OLD_BINARY NEW_BINARY FILE...}
  shift 2
fi
(($# > 0)) || { echo "compare_examples.sh: no Markdown file given" >&2; exit 2; }
if [[ $mode != list ]]; then
  old=$(realpath "$old")
  new=$(realpath "$new")
fi
exec python3 - "$mode" "${old:-}" "${new:-}" "$@" <<'PY'
import hashlib, os, re, shutil, subprocess, sys, tempfile

mode, old_bin, new_bin, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

FENCE = re.compile(r'^(\s*)```\s*([\w-]*)\s*$')
NAMED = re.compile(r'`([\w.-]+\.jsonl?)`:\s*$')
CALLS = re.compile(r'(^|[\s|;&(])(\./build/)?dpbudget\s')


def blocks(path):
    """(language, lines without the fence's indentation, the text line before)."""
    lines = open(path, encoding='utf-8').read().split('\n')
    before, i = '', 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                before = lines[i]
            i += 1
            continue
        indent, lang, body = len(m.group(1)), m.group(2), []
        i += 1
        while i < len(lines) and not re.match(r'^\s*```\s*$', lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == '' else lines[i])
            i += 1
        yield lang, body, before
        before, i = '', i + 1


def joined(lines):
    """Lines with `\\`-continuations joined, each with its leading blanks gone."""
    out, cur = [], None
    for line in lines:
        text = line.strip() if cur is None else ' ' + line.strip()
        cur = (cur or '') + text
        if cur.endswith('\\'):
            cur = cur[:-1].rstrip()
        else:
            out.append(cur)
            cur = None
    if cur is not None:
        out.append(cur)
    return out


def steps(path):
    """What the file gives, in order: ('file', name, text) or ('cmd', command)."""
    for lang, body, before in blocks(path):
        if lang == 'json':
            m = NAMED.search(before)
            if m:
                yield 'file', m.group(1), '\n'.join(body) + '\n'
            continue
        if lang not in ('', 'console', 'sh', 'bash', 'shell'):
            continue
        if any(l.startswith('$ ') for l in body):  # prompts: a console session
            i = 0
            while i < len(body):
                if not body[i].startswith('$ '):
                    i += 1
                    continue
                cmd_lines = [body[i][2:]]
                while cmd_lines[-1].rstrip().endswith('\\') and i + 1 < len(body):
                    i += 1
                    cmd_lines.append(body[i])
                cmd = joined(cmd_lines)[0]
                i += 1
                m = re.match(r'^cat (\S+)$', cmd)
                if m:  # the file's text: the lines up to the next prompt
                    text = []
                    while i < len(body) and not body[i].startswith('$ '):
                        text.append(body[i])
                        i += 1
                    yield 'file', m.group(1), '\n'.join(text) + '\n'
                else:
                    yield 'cmd', cmd
        elif lang != '':
            for cmd in joined([l for l in body if l.strip() and not l.lstrip().startswith('#')]):
                yield 'cmd', cmd


def kind(cmd):
    """('run', command for bash) or ('skip', reason) or None (not dpbudget's)."""
    if '${{' in cmd and CALLS.search(cmd):
        return 'skip', 'a GitHub Actions template (${{ ... }}), not a shell command'
    if cmd.startswith('dpbudget '):
        return 'run', cmd
    if cmd.startswith('./build/dpbudget '):
        return 'run', cmd[len('./build/'):]
    if CALLS.search(cmd):
        if cmd.startswith('parallel '):
            return 'skip', 'runs dpbudget under GNU parallel'
        if 'python3 ' in cmd:
            return 'skip', 'needs the Python ledger.py and dp_accounting'
        if cmd.startswith('apt-get '):
            return 'skip', 'the set-up command (installs packages, builds; .ci/run runs it)'
        return 'skip', 'dpbudget is not the command'
    return None


if mode == 'list':
    for path in files:
        for step in steps(path):
            if step[0] == 'cmd' and kind(step[1]):
                print(step[1])
    sys.exit(0)

scratch = tempfile.mkdtemp(prefix='compare_examples_')
bins = {}
for label, binary in (('old', old_bin), ('new', new_bin)):
    d = os.path.join(scratch, 'bin-' + label)
    os.makedirs(d)
    os.symlink(binary, os.path.join(d, 'dpbudget'))
    bins[label] = d


def snapshot(d):
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            out[os.path.relpath(p, d)] = open(p, 'rb').read()
    return out


def run(label, base, cmd):
    """stdout, stderr, status and the files written or changed, of cmd in a copy of base."""
    work = os.path.join(scratch, 'run-' + label)
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    env = dict(os.environ, PATH=bins[label] + os.pathsep + os.environ['PATH'],
               SLURM_ARRAY_TASK_ID='1')
    p = subprocess.run(['bash', '-c', cmd], cwd=work, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=600)
    given, now = snapshot(base), snapshot(work)
    written = {n: t for n, t in now.items() if given.get(n) != t}
    return p.stdout, p.stderr, p.returncode, written


def digest(result):
    out, err, status, written = result
    h = hashlib.sha256()
    for part in (out, err, str(status).encode()):
        h.update(hashlib.sha256(part).digest())
    for n in sorted(written):
        h.update(n.encode() + b'\0' + hashlib.sha256(written[n]).digest())
    return h.hexdigest()[:16]


same = diff = skipped = 0
skips = []
try:
    for index, path in enumerate(files):
        base = os.path.join(scratch, 'files-%d' % index)
        os.makedirs(base)
        for step in steps(path):
            if step[0] == 'file':
                with open(os.path.join(base, step[1]), 'w', encoding='utf-8') as f:
                    f.write(step[2])
                continue
            k = kind(step[1])
            if k is None:
                continue
            if k[0] == 'skip':
                skipped += 1
                skips.append('SKIP %s: %s (%s)' % (path, step[1], k[1]))
                continue
            for target in re.findall(r'>\s*"?([^\s"]+/)[^\s"/]+', k[1]):  # > completions/x
                os.makedirs(os.path.join(base, target), exist_ok=True)
            a = run('old', base, k[1])
            if mode == 'digest':
                print('%s\t%s' % (digest(a), step[1]))
                sys.stdout.flush()
                continue
            b = run('new', base, k[1])
            what = [name for name, x, y in (('stdout', a[0], b[0]), ('stderr', a[1], b[1]),
                                            ('status', a[2], b[2]), ('files', a[3], b[3]))
                    if x != y]
            if what:
                diff += 1
                print('DIFF (%s) %s' % (', '.join(what), step[1]))
            else:
                same += 1
                print('SAME (status %d%s) %s' % (a[2], ', writes ' + ' '.join(sorted(a[3]))
                                                  if a[3] else '', step[1]))
            sys.stdout.flush()
finally:
    shutil.rmtree(scratch, ignore_errors=True)
if mode == 'digest':
    for s in skips:
        print(s, file=sys.stderr)
    sys.exit(0)
for s in skips:
    print(s)
print('%d SAME, %d DIFF, %d SKIP' % (same, diff, skipped))
sys.exit(1 if diff else 0)
PY
