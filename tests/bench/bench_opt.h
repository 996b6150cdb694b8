/* SPDX-License-Identifier: BSD-3-Clause
 * bench_opt.h — the benchmark programs' long options, from a table: each row
 * names an option and the variable it sets (typed macros below), and
 * bench_opt_parse runs getopt_long over the table. No DPDK: the kernel-socket
 * programs and b7_tcp_rx use it as the EAL benchmarks do (bench_util.c).
 *
 * Numbers are read with strtoul/strtoull base 0 (decimal, 0x hex), atoi
 * (BENCH_OPT_INT) and strtod; a WORD option stores the index of its
 * argument in a NULL-terminated list of accepted words. */
#ifndef LCP_BENCH_OPT_H
#define LCP_BENCH_OPT_H

#include <stdbool.h>
#include <stdint.h>

#define BENCH_OPT_MAX 32 /* rows in one table */

enum bench_opt_kind {
	BENCH_OPT_K_STR,
	BENCH_OPT_K_FLAG,
	BENCH_OPT_K_UINT,
	BENCH_OPT_K_ULONG,
	BENCH_OPT_K_U64,
	BENCH_OPT_K_INT,
	BENCH_OPT_K_DOUBLE,
	BENCH_OPT_K_WORD,
};

struct bench_opt {
	const char *name; /* without the leading "--"; NULL ends the table */
	enum bench_opt_kind kind;
	union {
		const char **str;
		bool *flag; /* set to true; the option takes no argument */
		unsigned *u;
		unsigned long *ul;
		uint64_t *u64;
		int *i; /* BENCH_OPT_K_INT and BENCH_OPT_K_WORD */
		double *d;
	};
	const char *const *words; /* BENCH_OPT_K_WORD */
};

/* clang-format off */
#define BENCH_OPT_STR(n, p) { .name = (n), .kind = BENCH_OPT_K_STR, .str = (p) }
#define BENCH_OPT_FLAG(n, p) { .name = (n), .kind = BENCH_OPT_K_FLAG, .flag = (p) }
#define BENCH_OPT_UINT(n, p) { .name = (n), .kind = BENCH_OPT_K_UINT, .u = (p) }
#define BENCH_OPT_ULONG(n, p) { .name = (n), .kind = BENCH_OPT_K_ULONG, .ul = (p) }
#define BENCH_OPT_U64(n, p) { .name = (n), .kind = BENCH_OPT_K_U64, .u64 = (p) }
#define BENCH_OPT_INT(n, p) { .name = (n), .kind = BENCH_OPT_K_INT, .i = (p) }
#define BENCH_OPT_DOUBLE(n, p) { .name = (n), .kind = BENCH_OPT_K_DOUBLE, .d = (p) }
#define BENCH_OPT_WORD(n, p, w) { .name = (n), .kind = BENCH_OPT_K_WORD, .i = (p), .words = (w) }
#define BENCH_OPT_END { .name = NULL }
/* clang-format on */

/* Set the variables of opts from argv[1..] (getopt_long, from optind 1; other
 * arguments are left alone). 0, or -1 after saying why on stderr: an option
 * not in opts or without its argument (getopt's message, then "usage: prog usage"
 * unless usage is NULL), or a word not in the list ("prog: --name a|b|c"). */
int bench_opt_parse(int argc, char **argv, const struct bench_opt *opts, const char *prog,
		    const char *usage);

#endif
