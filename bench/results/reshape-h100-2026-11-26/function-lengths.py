#!/usr/bin/env python3
"""
function-lengths.py: the functions of C and CUDA files longer than a limit,
longest first.  The files are in PostgreSQL's layout: a body opens with a
line holding only '{' and closes with a line holding only '}' at the same
indentation (member functions of a struct are indented once); a function's
length is its body's, from that '{' to that '}', both included.

    python3 function-lengths.py [--limit N] FILE...    (default limit 120)
"""
import re
import sys

KEYWORDS = {'if', 'for', 'while', 'switch', 'do', 'else', 'return', 'sizeof'}


def functions(path):
    lines = open(path, errors='replace').read().split('\n')
    for i, line in enumerate(lines):
        if line.strip() != '{':
            continue
        indent = line[:len(line) - len(line.lstrip())]
        name = None
        for j in range(i - 1, max(i - 8, -1), -1):
            if lines[j].strip() in ('', '}', '};') or lines[j].rstrip().endswith(';'):
                break
            m = re.match(re.escape(indent) + r'([A-Za-z_][A-Za-z0-9_:~]*)\s*\(', lines[j])
            if m:
                name = m.group(1)
                break
        if name is None or name in KEYWORDS:
            continue
        for k in range(i + 1, len(lines)):
            if lines[k] == indent + '}':
                yield k - i + 1, i + 1, name
                break


def main(argv):
    limit = 120
    if len(argv) >= 2 and argv[0] == '--limit':
        limit = int(argv[1])
        argv = argv[2:]
    found = [(n, path, line, name) for path in argv for n, line, name in functions(path)]
    for n, path, line, name in sorted(found, reverse=True):
        if n > limit:
            print(f'{n:5d}  {path}:{line}  {name}')


if __name__ == '__main__':
    main(sys.argv[1:])
