/* SPDX-License-Identifier: BSD-3-Clause
 * replay.c — main() for the fuzz targets in builds without libFuzzer (gcc, make
 * check): every input is one LLVMFuzzerTestOneInput() call, so every file in a
 * target's corpus, every crash reproducer included, is a regression test.
 *
 *   replay_<target> [FILE|DIR]...
 *
 * With no argument it replays FUZZ_CORPUS_DIR (compiled in: the target's corpus
 * under $(srcdir), so it works in VPATH builds and distcheck). A directory is
 * replayed file by file in sorted order (not recursively). A target reports a
 * broken invariant with __builtin_trap() (SIGILL): the test fails and the name of
 * the input that was running is already on stderr. Exit 0 after all inputs, 1 if
 * an argument cannot be read or a directory holds no input (an empty corpus is a
 * packaging error, not a pass).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int
read_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (f == NULL)
		return -1;
	do {
		if (cap - n < 65536) {
			uint8_t *nb;

			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return -1;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

static int
run_one(const char *path)
{
	uint8_t *buf, *copy;
	size_t len;

	if (read_file(path, &buf, &len) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* exactly sized copy: an overread past the input is an overread past
	 * the allocation (ASan builds catch it) */
	copy = malloc(len ? len : 1);
	if (copy == NULL) {
		free(buf);
		return -1;
	}
	memcpy(copy, buf, len);
	free(buf);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
run_dir(const char *dir, unsigned *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char *p;
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		if (asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			abort();
		if (stat(p, &sb) < 0 || !S_ISREG(sb.st_mode)) {
			free(p);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			names = realloc(names, cap * sizeof(*names));
			if (names == NULL)
				abort();
		}
		names[n++] = p;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp);
	for (size_t i = 0; i < n; i++) {
		if (run_one(names[i]) < 0)
			rc = -1;
		else
			(*count)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

int
main(int argc, char **argv)
{
	static const char *dflt[] = { FUZZ_CORPUS_DIR };
	const char *const *args = (const char *const *)argv + 1;
	int nargs = argc - 1, rc = 0;
	unsigned count = 0;

	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	if (nargs == 0) {
		args = dflt;
		nargs = 1;
	}
	for (int i = 0; i < nargs; i++) {
		struct stat sb;

		if (stat(args[i], &sb) < 0) {
			fprintf(stderr, "replay: %s: %s\n", args[i], strerror(errno));
			rc = 1;
			continue;
		}
		if (S_ISDIR(sb.st_mode)) {
			unsigned before = count;

			if (run_dir(args[i], &count) < 0)
				rc = 1;
			if (count == before) {
				fprintf(stderr, "replay: %s: no input files\n", args[i]);
				rc = 1;
			}
		} else if (run_one(args[i]) < 0) {
			rc = 1;
		} else {
			count++;
		}
	}
	printf("replay: %u inputs, %s\n", count, rc == 0 ? "no failure" : "errors (see above)");
	return rc;
}
