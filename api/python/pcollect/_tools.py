# SPDX-License-Identifier: MIT
"""Where the pcollect tools are, for python3 -m pcollect and pcollect.profile()."""
import os
import shutil


class ToolMissing(RuntimeError):
    pass


def tool(name):
    """The path of pcollect's tool NAME: $PCOLLECT_BINDIR, where this module was built or
    installed with the tools (_where.py, written by meson), then PATH."""
    dirs = [os.environ.get("PCOLLECT_BINDIR", "")]
    try:
        from . import _where
        dirs += _where.DIRS
    except ImportError:
        pass
    for d in dirs:
        p = os.path.join(d, name) if d else ""
        if p and os.access(p, os.X_OK):
            return p
    p = shutil.which(name)
    if not p:
        raise ToolMissing("cannot find the program '%s': not beside this module and not on "
                          "PATH (set PCOLLECT_BINDIR to the directory of the pcollect tools)"
                          % name)
    return p
