/* SPDX-License-Identifier: MIT */
/* Parsing of /proc/<pid>/maps lines. */
#include "common/proc-maps.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

static int hex(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	for (;; s++, n++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n >= 16)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	if (n == 0)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static int dec(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -1;
	(*p)++;
	return 0;
}

int proc_map_parse(char *line, struct proc_map *m)
{
	const char *p = line;
	uint64_t major, minor;
	size_t len;

	memset(m, 0, sizeof(*m));
	len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	if (hex(&p, &m->start) || expect(&p, '-') || hex(&p, &m->end) || expect(&p, ' '))
		return -1;
	if (m->end < m->start)
		return -1;
	if (strlen(p) < 5 || p[4] != ' ')
		return -1;
	if (p[0] == 'r')
		m->prot |= PF_R;
	else if (p[0] != '-')
		return -1;
	if (p[1] == 'w')
		m->prot |= PF_W;
	else if (p[1] != '-')
		return -1;
	if (p[2] == 'x')
		m->prot |= PF_X;
	else if (p[2] != '-')
		return -1;
	if (p[3] != 's' && p[3] != 'p')
		return -1;
	m->shared = p[3] == 's';
	p += 5;
	if (hex(&p, &m->offset) || expect(&p, ' ') || hex(&p, &major) || expect(&p, ':') ||
	    hex(&p, &minor) || expect(&p, ' ') || dec(&p, &m->inode))
		return -1;
	while (*p == ' ')
		p++;
	m->path = p;
	return 0;
}

bool proc_map_is_anon_exec(const struct proc_map *m)
{
	size_t len = strlen(m->path);

	if (!(m->prot & PF_X))
		return false;
	if (len == 0)
		return true;
	if (m->path[0] == '[')
		return strcmp(m->path, "[vdso]") && strcmp(m->path, "[vsyscall]") &&
		       strcmp(m->path, "[vvar]");
	if (!strncmp(m->path, "/memfd:", 7))
		return true;
	return len > 10 && !strcmp(m->path + len - 10, " (deleted)");
}

int proc_maps_path_at(uint64_t addr, char *out, size_t cap)
{
	char line[4096 + 128];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -1;

	if (!f)
		return -1;
	while (ret < 0 && fgets(line, sizeof(line), f)) {
		struct proc_map m;

		if (proc_map_parse(line, &m) == 0 && addr >= m.start && addr < m.end &&
		    m.path[0] == '/' && strlen(m.path) < cap) {
			memcpy(out, m.path, strlen(m.path) + 1);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}
