#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Find the CPython interpreters the tests run on: no path of any machine is written here.

Candidates, in this order:
  - each entry of PCOLLECT_TEST_PYTHONS, a colon-separated list of interpreter executables
    (a wrapper script that starts an interpreter some other way counts too);
  - with pyenv present (PYENV_ROOT, else `pyenv root`): $(pyenv root)/versions/*/bin/python3.N;
  - every python3.N on PATH (the distribution's /usr/bin/python3.N among them), except pyenv's
    shims, which only run the version pyenv has activated (the versions are listed above).
Each candidate is run once with a probe that prints its version and build; one that does not
run is left out with the reason, so a wrapper is known by what it runs, never by its name. A
good answer is kept (${XDG_CACHE_HOME:-~/.cache}/pcollect/pythons.json) for as long as the file
probed is the same file (device, inode, size, modification time) and the probe the same.

Labels (the tests' argument, tests/e2e/meson.build):
  3.N         a build of CPython 3.N that is not the distribution's: a shared build
              (libpython3.N.so beside it, as pyenv makes) first, newest patch release first;
  debian-3.N  the distribution's build of 3.N (prefix /usr), the interpreter linked into the
              executable.

Command line:
  pythons.py                list every interpreter found (and the candidates left out)
  pythons.py LABEL          print the executable of LABEL, or the reason there is none and
                            exit 77 (a test's "skipped")
  pythons.py --tsv          one line per interpreter, tab-separated, for the unit tests
                            (tests/unit/python-test-lib.h): minor micro shared distro
                            executable binary prefix libpython include
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

ENV = "PCOLLECT_TEST_PYTHONS"
SKIP = 77

PROBE = r"""
import json, sys, sysconfig
# the program's own file: the one mapped where its headers are (AT_PHDR as the C library
# tells it: under an explicit loader the kernel's, /proc/self/auxv, names the loader's), which
# is neither sys.executable under a wrapper nor /proc/self/exe under an explicit loader
try:
    import ctypes
    libc = ctypes.CDLL(None)
    libc.getauxval.restype = ctypes.c_ulong
    phdr = libc.getauxval(3)
except Exception:
    phdr = 0
lib = image = ""
with open("/proc/self/maps") as f:
    for line in f:
        parts = line.split(None, 5)
        path = parts[-1].strip() if len(parts) == 6 else ""
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        if lo <= phdr < hi and path.startswith("/"):
            image = path
        if "/libpython3." in path and not lib:
            lib = path
print(json.dumps({
    "implementation": getattr(sys, "implementation", sys).name
        if hasattr(sys, "implementation") else "cpython",
    "version": list(sys.version_info[:3]),
    "executable": sys.executable,
    "image": image,
    "prefix": sys.base_prefix,
    "libpython": lib,
    "include": sysconfig.get_paths().get("include", ""),
}))
"""

NAME = re.compile(r"python3\.(\d+)$")


class Python:
    """One interpreter: how to run it (exe) and what it is."""

    def __init__(self, exe, info):
        self.exe = exe
        self.info = info
        self.version = tuple(info["version"])
        self.minor, self.micro = self.version[1], self.version[2]
        self.binary = os.path.realpath(info.get("image") or info["executable"] or exe)
        self.prefix = info["prefix"]
        self.libpython = info["libpython"]
        self.include = info["include"] or ""
        self.shared = bool(self.libpython)
        # shared: the interpreter runs from libpython3.N.so (mapped in the probe), as pyenv
        # builds it; otherwise it is linked into the executable. The distribution's own build
        # lives in /usr (sys.base_prefix), as on Debian.
        self.distro = os.path.realpath(self.prefix) == "/usr"

    def kind(self):
        return "shared build" if self.shared else (
            "distribution build" if self.distro else "interpreter linked into the executable")

    def describe(self):
        return "%s (%d.%d.%d, %s)" % (self.exe, self.version[0], self.minor, self.micro,
                                      self.kind())


def _pyenv_root():
    if os.path.isdir(os.environ.get("PYENV_ROOT", "")):
        return os.environ["PYENV_ROOT"]  # what `pyenv root` says, without running it
    if shutil.which("pyenv"):
        try:
            cp = subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, timeout=30)
            if cp.returncode == 0 and cp.stdout.strip():
                return cp.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return os.environ.get("PYENV_ROOT") or None


def candidates(minor=None):
    """Executables to probe, first ones first; with minor, only those that may be 3.minor
    (the entries of PCOLLECT_TEST_PYTHONS are always probed: their name says nothing)."""
    out = [p for p in os.environ.get(ENV, "").split(":") if p]
    root = _pyenv_root()
    want = "python3.%s" % (minor if minor is not None else "*")
    if root:
        out += sorted(p for p in glob.glob(os.path.join(root, "versions", "*", "bin", want))
                      if NAME.search(p))
    shims = os.path.realpath(os.path.join(root, "shims")) if root else None
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not d or (shims and os.path.realpath(d) == shims):
            continue
        out += sorted(p for p in glob.glob(os.path.join(d, want)) if NAME.search(p))
    seen, uniq = set(), []
    for p in out:
        if p not in seen:
            seen.add(p)
            uniq.append(p)
    return uniq


CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                     "pcollect", "pythons.json")


def _identity(exe):
    """What makes a probe's answer still good: the file probed (a wrapper's own file: it is
    written again when what it runs changes), and the probe itself."""
    st = os.stat(exe)
    return "%s %d %d %d %d %s" % (os.path.realpath(exe), st.st_dev, st.st_ino, st.st_size,
                                  st.st_mtime_ns, hashlib.sha1(PROBE.encode()).hexdigest())


def _cache_load():
    try:
        with open(CACHE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _cache_store(cache):
    """Write the cache whole, by rename: tests running at once each see a whole file."""
    try:
        os.makedirs(os.path.dirname(CACHE), exist_ok=True)
        tmp = "%s.%d" % (CACHE, os.getpid())
        with open(tmp, "w") as f:
            json.dump(cache, f)
        os.replace(tmp, CACHE)
    except OSError:
        pass


def probe(exe):
    """A Python for exe, or the reason it is not one (a string): asked of a cached answer
    first (run_probe)."""
    if not os.access(exe, os.X_OK) or os.path.isdir(exe):
        return "not an executable file"
    key = _identity(exe)
    hit = _cache_load().get(exe)
    if hit and hit[0] == key:
        return Python(exe, hit[1])
    p = run_probe(exe)
    if not isinstance(p, str):  # a failure may pass (a timeout on a busy machine): not kept
        cache = _cache_load()
        cache[exe] = [key, p.info]
        _cache_store(cache)
    return p


def run_probe(exe):
    """A Python for exe, or the reason it is not one (a string), from running it."""
    try:
        cp = subprocess.run([exe, "-c", PROBE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as err:
        return "does not run: %s" % err
    if cp.returncode != 0:
        lines = cp.stderr.strip().splitlines()
        return "exits %d%s" % (cp.returncode, (": " + lines[-1]) if lines else "")
    try:
        info = json.loads(cp.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return "printed no version: %r" % cp.stdout[:200]
    if info.get("implementation") != "cpython" or info["version"][0] != 3:
        return "not CPython 3 (%s %s)" % (info.get("implementation"), info["version"])
    return Python(exe, info)


def discover(minor=None):
    """(interpreters found, [(candidate, reason left out)]); one entry per interpreter binary
    and version, the first candidate that reaches it kept."""
    found, left, seen = [], [], set()
    for exe in candidates(minor):
        p = probe(exe)
        if isinstance(p, str):
            left.append((exe, p))
            continue
        if minor is not None and p.minor != minor:
            continue
        key = (p.binary, p.version, p.prefix)
        if key in seen:
            continue
        seen.add(key)
        found.append(p)
    return found, left


def parse_label(label):
    """(minor, distro) of a label, or None."""
    m = re.fullmatch(r"(debian-)?3\.(\d+)", label)
    return (int(m.group(2)), bool(m.group(1))) if m else None


def for_label(label):
    """The Python of a label, or the reason there is none (a string)."""
    parsed = parse_label(label)
    if not parsed:
        return "unknown interpreter label '%s' (3.N or debian-3.N)" % label
    minor, distro = parsed
    found, left = discover(minor)
    fits = [p for p in found if p.distro == distro]
    if not fits:
        why = "no %s found" % ("distribution build of CPython 3.%d (python3.%d on PATH with "
                               "prefix /usr)" % (minor, minor) if distro else
                               "CPython 3.%d other than the distribution's" % minor)
        others = ["%s: %s" % (exe, r) for exe, r in left]
        others += ["%s: %s" % (p.exe, "the distribution's" if p.distro else "not the "
                                "distribution's") for p in found]
        where = "PATH, pyenv root and %s" % ENV
        return "%s in %s%s" % (why, where, ("; tried " + "; ".join(others)) if others else "")
    fits.sort(key=lambda p: (not p.shared, tuple(-x for x in p.version)))
    return fits[0]


def main(argv):
    if len(argv) == 2 and argv[1] == "--tsv":
        for p in discover()[0]:
            print("\t".join(str(x) for x in (p.minor, p.micro, int(p.shared), int(p.distro),
                                             p.exe, p.binary, p.prefix, p.libpython,
                                             p.include)))
        return 0
    if len(argv) == 2 and not argv[1].startswith("-"):
        p = for_label(argv[1])
        if isinstance(p, str):
            print("SKIP: " + p)
            return SKIP
        print(p.exe)
        return 0
    if len(argv) == 1:
        found, left = discover()
        for p in sorted(found, key=lambda p: (p.version, p.distro)):
            print(p.describe())
        for exe, why in left:
            print("left out: %s: %s" % (exe, why))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
