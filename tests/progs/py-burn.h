/* SPDX-License-Identifier: MIT */
/* The Python source of py_burn(ms), which burns ms ms of CPU, for programs embedding Python. */
#ifndef PCOLLECT_PY_BURN_H
#define PCOLLECT_PY_BURN_H

static const char py_burn_code[] = "import time\n"
				   "def py_burn(ms):\n"
				   "    end = time.thread_time() + ms / 1000\n"
				   "    x = 0\n"
				   "    while time.thread_time() < end:\n"
				   "        for i in range(1000):\n"
				   "            x = (x + i) & 1023\n"
				   "    return x\n";

#endif
