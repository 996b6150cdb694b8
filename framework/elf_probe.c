/* SPDX-License-Identifier: BSD-3-Clause
 * elf_probe.c — read a plugin's descriptor from its file, without loading it.
 *
 * dlopen() runs a library's constructors, so checking the descriptor after
 * dlopen would run code from a plugin we are about to refuse. Instead we parse
 * the ELF file (64-bit, native byte order and machine, ET_DYN), find
 * lcp_plugin_descriptor in .dynsym, map its address to a file offset through the
 * PT_LOAD segments, and read the plain leading fields (magic, ABI, size, kind,
 * name). Written by hand over <elf.h> because only these few lookups are needed
 * and libelf would be a dependency for ~150 lines; every offset is bounds-checked
 * (this parses untrusted files).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lcp_priv.h"

#if defined(__x86_64__)
#define LCP_EM EM_X86_64
#elif defined(__aarch64__)
#define LCP_EM EM_AARCH64
#else
#error "unsupported machine for the plugin probe"
#endif

#define LCP_DESC_PLAIN_BYTES offsetof(struct lcp_plugin, version)

static int
in_file(size_t fsize, uint64_t off, uint64_t len)
{
	return off <= fsize && len <= fsize - off;
}

static int
probe_mem(const uint8_t *f, size_t fsize, struct lcp_probe *out, char *msg, size_t len)
{
	const Elf64_Ehdr *eh = (const void *)f;
	const Elf64_Shdr *sh, *dynsym = NULL, *strtab;
	const Elf64_Phdr *ph;
	const Elf64_Sym *sym = NULL;
	uint64_t off = 0;
	int found_seg = 0;

	if (fsize < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
		snprintf(msg, len, "not a shared object: no ELF header");
		return -1;
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != LCP_EM) {
		snprintf(msg, len, "not a shared object for this machine: ELF class %u, data %u, machine %u",
			 eh->e_ident[EI_CLASS], eh->e_ident[EI_DATA], eh->e_machine);
		return -1;
	}
	if (eh->e_type != ET_DYN) {
		snprintf(msg, len, "not a shared object: ELF type %u, expected ET_DYN (%u)",
			 eh->e_type, ET_DYN);
		return -1;
	}
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_file(fsize, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) ||
	    !in_file(fsize, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr))) {
		snprintf(msg, len, "not a shared object: ELF headers out of bounds");
		return -1;
	}
	/* f is page-aligned (mmap); the tables are read through struct pointers, so
	 * their offsets must keep the structs aligned (UBSan found a fuzzed file with
	 * e_shoff % 8 != 0 being read misaligned: undefined behaviour). Linkers
	 * always align them; a file that does not is malformed. */
	if (eh->e_shoff % _Alignof(Elf64_Shdr) != 0 || eh->e_phoff % _Alignof(Elf64_Phdr) != 0) {
		snprintf(msg, len, "not a shared object: ELF headers misaligned");
		return -1;
	}
	sh = (const void *)(f + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			dynsym = &sh[i];
	if (dynsym == NULL || dynsym->sh_link >= eh->e_shnum ||
	    dynsym->sh_entsize != sizeof(Elf64_Sym) ||
	    dynsym->sh_offset % _Alignof(Elf64_Sym) != 0 || /* see the headers' alignment */
	    !in_file(fsize, dynsym->sh_offset, dynsym->sh_size)) {
		snprintf(msg, len, "no descriptor: no dynamic symbol table");
		return -1;
	}
	strtab = &sh[dynsym->sh_link];
	if (!in_file(fsize, strtab->sh_offset, strtab->sh_size)) {
		snprintf(msg, len, "no descriptor: symbol names out of bounds");
		return -1;
	}
	for (uint64_t i = 0; i < dynsym->sh_size / sizeof(Elf64_Sym); i++) {
		const Elf64_Sym *s = (const void *)(f + dynsym->sh_offset + i * sizeof(Elf64_Sym));
		const char *nm;

		if (s->st_name >= strtab->sh_size)
			continue;
		nm = (const char *)f + strtab->sh_offset + s->st_name;
		if (strnlen(nm, strtab->sh_size - s->st_name) == strtab->sh_size - s->st_name)
			continue;
		if (strcmp(nm, LCP_PLUGIN_SYMBOL) == 0 && s->st_shndx != SHN_UNDEF) {
			sym = s;
			break;
		}
	}
	if (sym == NULL) {
		snprintf(msg, len, "no descriptor: symbol %s not exported", LCP_PLUGIN_SYMBOL);
		return -1;
	}
	if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT) {
		snprintf(msg, len, "no descriptor: %s is not a data object", LCP_PLUGIN_SYMBOL);
		return -1;
	}
	if (sym->st_size < LCP_DESC_PLAIN_BYTES) {
		snprintf(msg, len, "descriptor size: expected %zu bytes, found %llu",
			 sizeof(struct lcp_plugin), (unsigned long long)sym->st_size);
		return -1;
	}
	ph = (const void *)(f + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (sym->st_value >= ph[i].p_vaddr &&
		    sym->st_value + LCP_DESC_PLAIN_BYTES <= ph[i].p_vaddr + ph[i].p_filesz) {
			off = sym->st_value - ph[i].p_vaddr + ph[i].p_offset;
			found_seg = 1;
			break;
		}
	}
	if (!found_seg || !in_file(fsize, off, LCP_DESC_PLAIN_BYTES)) {
		snprintf(msg, len, "no descriptor: %s is not backed by file data", LCP_PLUGIN_SYMBOL);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	memcpy(&out->magic, f + off + offsetof(struct lcp_plugin, magic), sizeof(out->magic));
	memcpy(&out->abi_major, f + off + offsetof(struct lcp_plugin, abi_major), sizeof(out->abi_major));
	memcpy(&out->abi_minor, f + off + offsetof(struct lcp_plugin, abi_minor), sizeof(out->abi_minor));
	memcpy(&out->size, f + off + offsetof(struct lcp_plugin, size), sizeof(out->size));
	memcpy(&out->kind, f + off + offsetof(struct lcp_plugin, kind), sizeof(out->kind));
	memcpy(out->name, f + off + offsetof(struct lcp_plugin, name), LCP_NAME_MAX);
	if (memchr(out->name, '\0', LCP_NAME_MAX) == NULL) {
		snprintf(msg, len, "name: not NUL-terminated within %d bytes", LCP_NAME_MAX);
		return -1;
	}
	if (sym->st_size != out->size && out->magic == LCP_PLUGIN_MAGIC &&
	    out->abi_major == LCP_ABI_MAJOR && out->size == sizeof(struct lcp_plugin)) {
		snprintf(msg, len, "descriptor size: symbol is %llu bytes, descriptor says %u",
			 (unsigned long long)sym->st_size, out->size);
		return -1;
	}
	return 0;
}

int
lcp_elf_probe(const char *path, struct lcp_probe *out, char *msg, size_t len)
{
	struct stat sb;
	void *m;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, len, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(msg, len, "not a shared object: not a regular file");
		close(fd);
		return -1;
	}
	if (sb.st_size == 0) {
		snprintf(msg, len, "not a shared object: empty file");
		close(fd);
		return -1;
	}
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(msg, len, "cannot map: %s", strerror(errno));
		return -1;
	}
	rc = probe_mem(m, (size_t)sb.st_size, out, msg, len);
	munmap(m, (size_t)sb.st_size);
	return rc;
}
