/* SPDX-License-Identifier: BSD-3-Clause
 * cli.h — what the lcpipe command line's files share: lcpipe.c (run, check,
 * describe, list-plugins) and ab/ (the A/B harness). Not part of liblcp.
 */
#ifndef LCP_CLI_H
#define LCP_CLI_H

#include <stdio.h>

struct lcp_cfg;

/* Split argv at "--": returns the count before it; *eal and *n_eal get what
 * follows (NULL, 0 without "--"). */
int cli_split_eal(int argc, char **argv, char ***eal, unsigned *n_eal);

/* Load and validate path exactly as `lcpipe check` does: 0 when valid, else
 * LCP_EXIT_CONFIG after printing every error ("error: ..." with its JSON path)
 * and a count line naming the file on stderr. *cfg gets what was loaded, valid
 * or not (NULL if the file could not be read): the caller frees it. Freeing a
 * config dlcloses its plugins, and loading another config after that would load
 * DPDK's driver libraries (plugin dependencies) a second time in the process,
 * whose constructors panic on re-registering their tailqs: a caller loading
 * several configs frees them all at the end. */
int cli_load_checked(const char *path, char **eal, unsigned n_eal, struct lcp_cfg **cfg);

/* `lcpipe ab A.json B.json ...` (ab.c); argv[0] is "ab". Returns the exit status. */
int cli_ab(int argc, char **argv);
/* its --help text (also in lcpipe(1)) */
void cli_ab_usage(FILE *f);

#endif
