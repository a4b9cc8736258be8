# SPDX-License-Identifier: MIT
"""What the report tests share: run preport, read its CSV and JSON, run it at a terminal."""
import csv
import fcntl
import io
import json
import os
import pty
import struct
import subprocess
import termios

import e2elib

PREPORT = e2elib.tool("preport")


def run(argv, code=0, env=None):
    """Run argv; fail unless it exits with code. Returns the CompletedProcess."""
    cp = e2elib.run(argv, env=env)
    if cp.returncode != code:
        e2elib.fail("%s: exit %d, expected %d\n%s%s" % (" ".join(argv), cp.returncode, code,
                                                         cp.stdout, cp.stderr))
    return cp


def preport(*args, code=0):
    return run([PREPORT] + list(args), code=code)


def rows(res, *args):
    """The CSV rows of a view, as dicts."""
    out = preport("-r", res, "-format", "csv", *args).stdout
    return list(csv.DictReader(io.StringIO(out)))


def json_rows(res, *args):
    return json.loads(preport("-r", res, "-format", "json", *args).stdout)["rows"]


def ms(v):
    """Seconds as printed ("1.234") to whole milliseconds; empty is 0."""
    return round(float(v) * 1000) if v not in ("", None) else 0


def num(v):
    return float(v) if v not in ("", None) else 0.0


def by(rows_, key, col, conv=ms):
    return {r[key]: conv(r[col]) for r in rows_}


def text_bytes(v):
    """Bytes as text shows them: "512 B", "1.5 KB", "3.0 MB" (1 KB = 1024 B)."""
    v = int(v)
    if abs(v) < 1024:
        return "%d B" % v
    x, u = float(abs(v)), -1
    units = ["KB", "MB", "GB", "TB", "PB", "EB"]
    while x >= 1024 and u < 5:
        x /= 1024
        u += 1
    if x >= 1023.95 and u < 5:
        x /= 1024
        u += 1
    return "%s%.1f %s" % ("-" if v < 0 else "", x, units[u])


def at_terminal(argv, cols, rows_=50):
    """Run argv with a pseudo-terminal of cols columns as its output; returns what it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows_, cols, 0, 0))
    p = subprocess.Popen(argv, stdout=slave, stderr=slave, stdin=subprocess.DEVNULL,
                         close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO once the program has closed its side
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    if p.wait(timeout=60) != 0:
        e2elib.fail("%s at a terminal: exit %d\n%s" % (" ".join(argv), p.returncode,
                                                        out.decode(errors="replace")))
    return out.decode(errors="replace").replace("\r\n", "\n")
