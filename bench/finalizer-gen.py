#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a synthetic result directory for pfinalize benchmarks: one process with a module
(a real ELF file, e.g. libpython) whose sampled addresses are drawn from that file's real
functions, NSTACKS distinct stacks and NSAMPLES samples (raw stream format v1, written here
byte for byte as docs/raw-format.md describes, so no build is needed).

usage: finalizer-gen.py OUTDIR LIBRARY [NSAMPLES [NSTACKS [THREADS]]]"""
import os
import random
import re
import struct
import subprocess
import sys
import zlib

MAGIC = b"PCRAW\r\n\x1a"
CHUNK_MAGIC = 0x4b484350
CHUNK_BYTES = 60000


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def svarint(v):
    return varint(((v << 1) ^ (v >> 63)) & 0xffffffffffffffff)


def string(b):
    return varint(len(b)) + b


def record(t, payload):
    return bytes([t]) + varint(len(payload)) + payload


def elf_info(path):
    """Build-id, executable PT_LOAD segments and sized function symbols of path."""
    notes = subprocess.run(["readelf", "-nW", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", notes)
    build_id = bytes.fromhex(m.group(1)) if m else b""
    segs = []
    for line in subprocess.run(["readelf", "-lW", path], capture_output=True,
                               text=True).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, vaddr, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            flags = " ".join(f[6:-1])
            prot = (4 if "R" in flags else 0) | (2 if "W" in flags else 0) | \
                   (1 if "E" in flags else 0)
            segs.append((vaddr, memsz, off, prot))
    funcs = []
    for line in subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                               text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT" and int(f[1], 16) > 0:
            funcs.append((int(f[0], 16), int(f[1], 16)))
    if not funcs:  # stripped: use the dynamic symbols
        for line in subprocess.run(["nm", "-D", "-S", "--defined-only", path],
                                   capture_output=True, text=True).stdout.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "tT" and int(f[1], 16) > 0:
                funcs.append((int(f[0], 16), int(f[1], 16)))
    return build_id, segs, funcs


class Stream:
    def __init__(self, path, pid, tid, origin_ns):
        self.f = open(path, "wb")
        host = b"bench".ljust(64, b"\0")
        self.f.write(MAGIC + struct.pack("<IHHiiiIQQQII", 0x01020304, 1, 128, pid, tid, -1, 1,
                                         origin_ns, 0, 10000000, 1, 0) + host)
        self.buf = bytearray()
        self.seq = 0
        self.base = 0
        self.last = 0

    def add(self, rec):
        if len(self.buf) + len(rec) > CHUNK_BYTES:
            self.flush()
        self.buf += rec

    def sample(self, t, stack, weight=1):
        self.add(record(1, svarint(t - self.last) + varint(stack) + varint(weight)))
        self.last = t

    def flush(self):
        if not self.buf:
            return
        self.f.write(struct.pack("<IIIIq", CHUNK_MAGIC, len(self.buf),
                                 zlib.crc32(self.buf) & 0xffffffff, self.seq, self.base))
        self.f.write(self.buf)
        self.buf = bytearray()
        self.seq += 1
        self.base = self.last

    def close(self):
        self.flush()
        self.f.close()


def main():
    out, lib = sys.argv[1], os.path.realpath(sys.argv[2])
    nsamples = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
    nstacks = int(sys.argv[4]) if len(sys.argv) > 4 else 5000
    nthreads = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    rnd = random.Random(42)
    build_id, segs, funcs = elf_info(lib)
    base = 0x7f0000000000
    os.makedirs(os.path.join(out, "raw"))
    os.makedirs(os.path.join(out, "meta"))
    origin = 1000000000
    with open(os.path.join(out, "meta", "4242.meta"), "w") as m:
        m.write("analysis=hotspots\nstart_monotonic_ns=%d\ninterval_ns=10000000\n"
                "command_line=synthetic %s\n" % (origin, os.path.basename(lib)))
    # Call paths: a few roots, then random functions; ip = function + offset inside it.
    hot = rnd.sample(funcs, min(len(funcs), 3000))

    def ip():
        start, size = rnd.choice(hot)
        return base + start + rnd.randrange(0, size)

    stacks = [[ip() for _ in range(rnd.randrange(8, 40))] for _ in range(nstacks)]
    load = record(7, svarint(0) + varint(0) + varint(base) + string(lib.encode()) +
                  string(build_id) + varint(len(segs)) +
                  b"".join(varint(base + v) + varint(sz) + varint(off) + varint(p)
                           for v, sz, off, p in segs))
    per = nsamples // nthreads
    weights = [1.0 / (i + 1) for i in range(nstacks)]  # a Zipf-like profile
    for t in range(nthreads):
        s = Stream(os.path.join(out, "raw", "4242.%d.praw" % (4242 + t)), 4242, 4242 + t,
                   origin)
        s.add(load)
        for i, st in enumerate(stacks):
            prev, enc = 0, bytearray()
            for a in st:
                enc += svarint(a - prev)
                prev = a
            s.add(record(2, varint(i) + varint(4) + varint(len(st)) + bytes(enc)))
        picks = rnd.choices(range(nstacks), weights=weights, k=per)
        tm = 0
        for k in picks:
            tm += 10000000
            s.sample(tm, k)
        s.close()
    print("%s: %d samples, %d stacks, %d threads, %d functions of %s" % (
        out, per * nthreads, nstacks, nthreads, len(hot), lib))


main()
