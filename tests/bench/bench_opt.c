/* SPDX-License-Identifier: BSD-3-Clause
 * bench_opt.c — see bench_opt.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opt.h"

/* the index of arg in words, or -1 after saying which words there are */
static int
bench_opt_word(const struct bench_opt *o, const char *arg, const char *prog)
{
	for (int w = 0; o->words[w] != NULL; w++)
		if (strcmp(arg, o->words[w]) == 0)
			return w;
	fprintf(stderr, "%s: --%s ", prog, o->name);
	for (int w = 0; o->words[w] != NULL; w++)
		fprintf(stderr, "%s%s", w > 0 ? "|" : "", o->words[w]);
	fprintf(stderr, "\n");
	return -1;
}

static int
bench_opt_set(const struct bench_opt *o, const char *arg, const char *prog)
{
	switch (o->kind) {
	case BENCH_OPT_K_STR:
		*o->str = arg;
		break;
	case BENCH_OPT_K_FLAG:
		*o->flag = true;
		break;
	case BENCH_OPT_K_UINT:
		*o->u = (unsigned)strtoul(arg, NULL, 0);
		break;
	case BENCH_OPT_K_ULONG:
		*o->ul = strtoul(arg, NULL, 0);
		break;
	case BENCH_OPT_K_U64:
		*o->u64 = strtoull(arg, NULL, 0);
		break;
	case BENCH_OPT_K_INT:
		*o->i = atoi(arg);
		break;
	case BENCH_OPT_K_DOUBLE:
		*o->d = strtod(arg, NULL);
		break;
	case BENCH_OPT_K_WORD: {
		int w = bench_opt_word(o, arg, prog);

		if (w < 0)
			return -1;
		*o->i = w;
		break;
	}
	}
	return 0;
}

int
bench_opt_parse(int argc, char **argv, const struct bench_opt *opts, const char *prog,
		const char *usage)
{
	struct option lo[BENCH_OPT_MAX + 1];
	int n = 0, c;

	for (; opts[n].name != NULL; n++) {
		if (n == BENCH_OPT_MAX) {
			fprintf(stderr, "%s: more than %d options in the table\n", prog,
				BENCH_OPT_MAX);
			return -1;
		}
		lo[n] = (struct option){
			.name = opts[n].name,
			.has_arg =
				opts[n].kind == BENCH_OPT_K_FLAG ? no_argument : required_argument,
			.val = n,
		};
	}
	lo[n] = (struct option){.name = NULL};
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c < 0 || c >= n) {
			if (usage != NULL)
				fprintf(stderr, "usage: %s %s\n", prog, usage);
			return -1;
		}
		if (bench_opt_set(&opts[c], optarg, prog) < 0)
			return -1;
	}
	return 0;
}
