#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Ground truth for test-python-linetable: raw line tables and what the interpreter decodes.
#
# Prints, for every code object of a few stdlib modules and synthetic sources:
#   C <firstlineno> <bytecode bytes> <co_linetable as hex, or '-' when empty>
#   L <start> <end> <line or -1>        one per range of co_lines()
# and, once, "V <minor>". Run by each interpreter under test.
import dis
import os
import sys
import types

SYNTHETIC = '''
def far_lines(x):
    a = 1
''' + '\n' * 300 + '''
    b = 2
''' + '\n' * 70000 + '''
    return (a +
            b +
            x)

def long_columns():
    return "''' + 'x' * 400 + '''" + str(1)

def negative(x):
    return [y
        for y in range(x)
        if y]

class K:
    def m(self):
        try:
            return 1 / 0
        except ZeroDivisionError:
            return 2
        finally:
            pass

def loops():
    t = 0
    for i in range(3):
        while t < i:
            t += 1
    return t
'''


def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)


def dump(co, out):
    table = co.co_linetable
    size = len(co.co_code)
    out.write(f"C {co.co_firstlineno} {size} {table.hex() if table else '-'}\n")
    for start, end, line in co.co_lines():
        out.write(f"L {start} {end} {-1 if line is None else line}\n")


def main():
    out = sys.stdout
    out.write(f"V {sys.version_info[1]}\n")
    sources = [compile(SYNTHETIC, '<synthetic>', 'exec')]
    for mod in ('dis', 'inspect', 'argparse', 'typing', 'email.message'):
        __import__(mod)
        path = sys.modules[mod].__file__
        with open(path, encoding='utf-8') as f:
            sources.append(compile(f.read(), path, 'exec'))
    for top in sources:
        for co in codes(top):
            dump(co, out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
