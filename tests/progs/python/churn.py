# SPDX-License-Identifier: MIT
"""Code objects made and dropped by the thousand: each round compiles a new function (exec of
a def named fn_<i>, or eval of a lambda) in a file named <churn-<i>>, runs it, and drops it, so
the next one is likely allocated where the last one was. Writes, per round, the
CLOCK_MONOTONIC times around its making and call: a sample that names round i must lie between them.

usage: churn.py TIMES_FILE [ROUNDS [ITERS]]
"""
import sys
import time

BODY = "    x = 0\n    for i in range(n):\n        x = (x * 7 + i) & 0xFFFF\n    return x\n"


def make(i):
    """Round i's function: its body line (the loop) is line 2 + i % 50 of <churn-i>."""
    pad = "\n" * (i % 50)
    if i % 2 == 0:
        src = pad + "def fn_%d(n):\n" % i + BODY
        ns = {}
        exec(compile(src, "<churn-%d>" % i, "exec"), ns)
        return ns["fn_%d" % i]
    src = pad + "(lambda n: [x for x in [0] for i in range(n) for x in [(x * 7 + i) & 0xFFFF]][-1])"
    return eval(compile(src, "<churn-%d>" % i, "eval"))


def main():
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    out = []
    for i in range(rounds):
        t0 = time.monotonic_ns()
        f = make(i)
        f(iters)
        t1 = time.monotonic_ns()
        del f
        out.append("%d %d %d\n" % (i, t0, t1))
    with open(sys.argv[1], "w") as fh:
        fh.writelines(out)


if __name__ == "__main__":
    main()
