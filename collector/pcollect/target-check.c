/* SPDX-License-Identifier: MIT */
/* What pcollect checks about a target before it creates anything: found, runnable, preloadable. */
#include "collector/pcollect/target-check.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

/* Search PATH like execvp(); remembers a non-executable match for the message. */
static int search_path(const char *cmd, char *path, size_t size, char *err, size_t err_size)
{
	const char *p = getenv("PATH");
	bool denied = false;

	if (!p || !*p)
		p = "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		size_t len = strcspn(p, ":");
		struct stat st;
		int n;

		if (len == 0)
			n = snprintf(path, size, "./%s", cmd);
		else
			n = snprintf(path, size, "%.*s/%s", (int)len, p, cmd);
		p += len;
		if (*p == ':')
			p++;
		if (n < 0 || (size_t)n >= size)
			continue;
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (access(path, X_OK) == 0)
			return 0;
		denied = true;
	}
	if (denied) {
		err_set(err, err_size, "cannot run '%s': Permission denied", cmd);
		return -EACCES;
	}
	err_set(err, err_size, "cannot run '%s': command not found", cmd);
	return -ENOENT;
}

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/*
 * An ELF file whose DT_SONAME is a dynamic loader's ("ld-linux-x86-64.so.2", "ld-*.so*"): a
 * static program has none, a shared library another name.
 */
static bool is_dynamic_loader(int fd, const Elf64_Ehdr *eh)
{
	Elf64_Phdr dyn = { 0 }, ph;
	Elf64_Dyn d;
	uint64_t strtab = 0, soname = UINT64_MAX, off;
	char name[32];
	int i;

	for (i = 0; i < eh->e_phnum; i++)
		if (!read_at(fd, &ph, sizeof(ph),
			     (off_t)(eh->e_phoff + (uint64_t)i * eh->e_phentsize)) &&
		    ph.p_type == PT_DYNAMIC)
			dyn = ph;
	for (off = 0; dyn.p_filesz && off + sizeof(d) <= dyn.p_filesz; off += sizeof(d)) {
		if (read_at(fd, &d, sizeof(d), (off_t)(dyn.p_offset + off)) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_STRTAB)
			strtab = d.d_un.d_ptr;
		else if (d.d_tag == DT_SONAME)
			soname = d.d_un.d_val;
	}
	if (!strtab || soname == UINT64_MAX)
		return false;
	/* DT_STRTAB is an address: its file offset is that of the PT_LOAD holding it */
	for (i = 0; i < eh->e_phnum; i++) {
		if (read_at(fd, &ph, sizeof(ph),
			    (off_t)(eh->e_phoff + (uint64_t)i * eh->e_phentsize)) ||
		    ph.p_type != PT_LOAD || strtab < ph.p_vaddr ||
		    strtab >= ph.p_vaddr + ph.p_filesz)
			continue;
		if (read_at(fd, name, sizeof(name) - 1,
			    (off_t)(ph.p_offset + (strtab - ph.p_vaddr) + soname)))
			return false;
		name[sizeof(name) - 1] = '\0';
		return strncmp(name, "ld-", 3) == 0 && strstr(name, ".so") != NULL;
	}
	return false;
}

/* A dynamically linked ELF of our class, or a script; recurses once into an interpreter. */
static int check_file(const char *shown, const char *path, int depth, char *err, size_t err_size)
{
	unsigned char head[256];
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	if (stat(path, &st)) {
		err_set(err, err_size, "cannot run '%s': %s", shown, strerror(errno));
		return -EINVAL;
	}
	if (S_ISDIR(st.st_mode)) {
		err_set(err, err_size, "cannot run '%s': Is a directory", shown);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		err_set(err, err_size, "cannot run '%s': not a regular file", shown);
		return -EINVAL;
	}
	if (access(path, X_OK)) {
		err_set(err, err_size, "cannot run '%s': %s", shown, strerror(errno));
		return -EINVAL;
	}
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		err_set(err, err_size,
			"cannot profile '%s': setuid and setgid programs ignore LD_PRELOAD, so "
			"the agent cannot be loaded",
			shown);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_set(err, err_size, "cannot run '%s': %s", shown, strerror(errno));
		return -EINVAL;
	}
	n = read(fd, head, sizeof(head) - 1);
	if (n < 0)
		n = 0;
	head[n] = '\0';
	if (n >= 2 && head[0] == '#' && head[1] == '!') {
		char interp[PATH_MAX];
		const char *s = (const char *)head + 2;
		size_t len;

		close(fd);
		while (*s == ' ' || *s == '\t')
			s++;
		len = strcspn(s, " \t\r\n");
		if (depth > 0 || len == 0 || len >= sizeof(interp))
			return 0; /* the kernel will say what it thinks of it */
		memcpy(interp, s, len);
		interp[len] = '\0';
		return check_file(interp, interp, depth + 1, err, err_size);
	}
	if (n >= SELFMAG && !memcmp(head, ELFMAG, SELFMAG)) {
		Elf64_Ehdr eh;
		bool interp = false;
		int i;

		if (head[EI_CLASS] != ELFCLASS64 || read_at(fd, &eh, sizeof(eh), 0)) {
			err_set(err, err_size,
				"cannot profile '%s': not a 64-bit program, the agent cannot be "
				"loaded into it",
				shown);
			ret = -EINVAL;
			goto out;
		}
		if (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) {
			for (i = 0; i < eh.e_phnum; i++) {
				Elf64_Phdr ph;

				if (read_at(fd, &ph, sizeof(ph),
					    (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)))
					break;
				if (ph.p_type == PT_INTERP)
					interp = true;
			}
		}
		/* the dynamic loader run as a program (ld-linux-x86-64.so.2 ./prog) preloads the
		   agent into the program it runs, as any dynamic program's loader does */
		if (!interp && eh.e_type == ET_DYN && is_dynamic_loader(fd, &eh))
			interp = true;
		if (!interp) {
			err_set(err, err_size,
				"cannot profile '%s': statically linked programs cannot load the "
				"agent (link it dynamically)",
				shown);
			ret = -EINVAL;
		}
	}
	/* Anything else is run by /bin/sh as execvp() would: the shell is checked then. */
out:
	close(fd);
	return ret;
}

int target_check(const char *cmd, char *path, size_t size, char *err, size_t err_size)
{
	int ret;

	err[0] = '\0';
	if (!cmd || !*cmd) {
		err_set(err, err_size, "no command to profile");
		return -EINVAL;
	}
	if (strchr(cmd, '/')) {
		if ((size_t)snprintf(path, size, "%s", cmd) >= size) {
			err_set(err, err_size, "cannot run '%s': File name too long", cmd);
			return -EINVAL;
		}
	} else {
		ret = search_path(cmd, path, size, err, err_size);
		if (ret)
			return ret;
	}
	return check_file(cmd, path, 0, err, err_size);
}
