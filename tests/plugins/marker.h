/* SPDX-License-Identifier: BSD-3-Clause
 * marker.h — the constructor every deliberately broken test plugin carries.
 *
 * Real plugins have no constructors (ARCHITECTURE.md). These do, on purpose: if
 * the loader ever dlopen()s a file it should have refused from its ELF header
 * alone, the constructor leaves a trace that the tests look for:
 *   - the plugin's id, one line, appended to the file named by $LCP_TEST_MARKER
 *   - "LCP-TEST-MARKER: constructor of <id> ran" on stderr
 * The tests also dlopen() each broken file directly to prove the trace appears
 * when the code does run (a marker that could never appear would prove nothing).
 */
#ifndef LCP_TEST_MARKER_H
#define LCP_TEST_MARKER_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LCP_TEST_MARKER_ENV "LCP_TEST_MARKER"
#define LCP_TEST_MARKER_TEXT "LCP-TEST-MARKER: constructor of "

#define LCP_TEST_MARKER_CTOR(id_)                                                   \
	__attribute__((constructor)) static void lcp_test_marker_ctor(void)         \
	{                                                                           \
		static const char line[] = id_ "\n";                                \
		static const char err[] = LCP_TEST_MARKER_TEXT id_ " ran\n";        \
		const char *m = getenv(LCP_TEST_MARKER_ENV);                        \
		ssize_t rc;                                                         \
                                                                                    \
		rc = write(2, err, sizeof(err) - 1);                                \
		if (m != NULL && *m != '\0') {                                      \
			int fd = open(m, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644); \
                                                                                    \
			if (fd >= 0) {                                              \
				rc = write(fd, line, sizeof(line) - 1);             \
				close(fd);                                          \
			}                                                           \
		}                                                                   \
		(void)rc;                                                           \
	}

#endif
