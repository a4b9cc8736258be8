#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The sections of finalizer/schema.sql, for pfinalize (as C) and for the tests (as SQL).

Usage: schema_sql.py schema.sql out.c writes one C string per section, fin_schema_<section>.
A section runs from its "-- section: NAME" line to the next one; the lines before the first
section (the file's header comment) are left out. tests/e2e/report_synth.py imports
sections() to build its databases from the same file."""
import re
import sys


def sections(text):
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"--\s*section:\s*(\w+)\s*$", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name is not None and line.strip() and not line.lstrip().startswith("--"):
            out[name].append(line)
    return out


def c_string(lines):
    return "\n".join('\t"%s\\n"' % l.replace("\\", "\\\\").replace('"', '\\"') for l in lines)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        secs = sections(f.read())
    if not secs:
        sys.exit("schema_sql.py: no '-- section: NAME' line in %s" % src)
    with open(dst, "w") as f:
        f.write("/* Generated from finalizer/schema.sql by finalizer/schema_sql.py: do not edit. */\n")
        f.write('#include "finalizer/schema.h"\n')
        for name, lines in secs.items():
            f.write("\nconst char fin_schema_%s[] =\n%s;\n" % (name, c_string(lines) or '\t""'))


if __name__ == "__main__":
    main()
