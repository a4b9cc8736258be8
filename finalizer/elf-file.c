/* SPDX-License-Identifier: MIT */
/* Opening ELF files with libelf: build-id note, .gnu_debuglink, presence of debug sections. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "finalizer/elf-file.h"

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void elf_library_init(void)
{
	elf_version(EV_CURRENT);
}

bool elf_file_build_id_is(const struct elf_file *f, const uint8_t *id, size_t len)
{
	return f->build_id_len == len && len && !memcmp(f->build_id, id, len);
}

/* Look for NT_GNU_BUILD_ID in one note section's data. */
static bool note_find_build_id(struct elf_file *f, Elf_Data *data)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= ELF_FILE_MAX_BUILD_ID) {
			memcpy(f->build_id, (const char *)data->d_buf + desc_off, nh.n_descsz);
			f->build_id_len = nh.n_descsz;
			return true;
		}
	}
	return false;
}

static void read_sections(struct elf_file *f)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(f->elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			f->has_symtab = true;
		if (!strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS && sh.sh_size > 0)
			f->has_debug_info = true;
		if (sh.sh_type == SHT_NOTE && !f->build_id_len) {
			data = elf_getdata(scn, NULL);
			if (data)
				note_find_build_id(f, data);
		}
		if (!strcmp(name, ".gnu_debuglink") && sh.sh_type != SHT_NOBITS && !f->debuglink) {
			data = elf_getdata(scn, NULL);
			/* File name, NUL, padding, CRC-32. */
			if (data && data->d_size > 4 && memchr(data->d_buf, '\0', data->d_size - 4))
				f->debuglink = strdup(data->d_buf);
		}
	}
}

/* Files stripped of section headers still have program headers with the note. */
static void read_phdr_notes(struct elf_file *f)
{
	size_t n, i;

	if (elf_getphdrnum(f->elf, &n))
		return;
	for (i = 0; i < n && !f->build_id_len; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(f->elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data)
			note_find_build_id(f, data);
	}
}

int elf_file_open(struct elf_file *f, const char *path)
{
	int err;

	pthread_once(&elf_once, elf_library_init);
	memset(f, 0, sizeof(*f));
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		err = -EINVAL;
		goto fail;
	}
	f->path = strdup(path);
	if (!f->path) {
		err = -ENOMEM;
		goto fail;
	}
	read_sections(f);
	if (!f->build_id_len)
		read_phdr_notes(f);
	return 0;
fail:
	elf_file_close(f);
	return err;
}

int elf_section_find(Elf *elf, const char *name, const uint8_t **data, size_t *size, uint64_t *addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	*data = NULL;
	*size = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name))
			continue;
		if (sh.sh_type == SHT_NOBITS || !sh.sh_size)
			return -ENOENT;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return -ENOENT;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return -ENOENT;
		*data = d->d_buf;
		*size = d->d_size;
		if (addr)
			*addr = sh.sh_addr;
		return 0;
	}
	return -ENOENT;
}

int elf_file_section(struct elf_file *f, const char *name, const uint8_t **data, size_t *size)
{
	return elf_section_find(f->elf, name, data, size, NULL);
}

void elf_file_close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f->debuglink);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}
