#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A program started through a chain of execs (issue 23, item 11: pyenv's shims, `env`,
wrapper scripts): sh execs sh, which execs cpu-split. Each image of the chain is a process of
the result, but an exec keeps the process and its thread: pfinalize counts one thread of one
process, not one per image, and does not call the chain's short images undersampled
threads. A run with -data-limit still counts the CPU time of the threads made after sampling
stopped (that figure is noted only then)."""
import e2elib as e


def main():
    prog = e.prog("cpu-split")
    chain = ["sh", "-c", 'exec sh -c "exec \\"$0\\" 2 1"', prog]
    with e.Workdir("exec-chain") as w:
        res = e.collect(w, "res", chain, interval=1, stdout="rounds=2\n")  # cpu-split.c
        cp = e.pfinalize(res)
        line = [x for x in cp.stderr.splitlines() if x.strip().startswith("samples:")]
        e.check(line and " in 1 thread of 1 process," in line[0],
                "an exec chain is one thread of one process: %s" % line)
        e.check("undersampled" not in cp.stderr,
                "no image of the chain called undersampled:\n%s" % cp.stderr)
        images = e.db_rows(res, "SELECT COUNT(*), COUNT(DISTINCT pid) FROM processes")[0]
        e.check(images == (3, 1), "the result keeps the chain's 3 images of pid 1 (%s)" %
                (images,))


if __name__ == "__main__":
    main()
