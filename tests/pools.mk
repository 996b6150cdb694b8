# tests/pools.mk — L1, EAL in the test process: the pool strategy modules
# (plugins/pool_mempool, pool_malloc, pool_rte_malloc, pool_ring) against the
# lcp_pool_ops contract of framework/include/lcp/pool.h, each loaded from the
# build tree through the registry. Included by tests/Makefile.am.
#
#   pools/test_pools   Check, one forked process (and EAL) per test and module
#                      variant: get/put single and bulk, alignment and layout,
#                      exhaustion (-ENOBUFS, all or nothing), names and memory
#                      after destroy, alloc on lcore 1 + write and free on lcore 2
#                      through an rte_ring, concurrent gets/puts on two lcores never
#                      handing out a held object. See the file's header.
if HAVE_CHECK
check_PROGRAMS += pools/test_pools
TESTS += pools/test_pools
endif
pools_test_pools_SOURCES = pools/test_pools.c
pools_test_pools_CPPFLAGS = -I$(top_srcdir)/framework -I$(top_builddir)/framework \
	-I$(top_srcdir)/framework/include -I$(top_builddir) \
	$(DPDK_CFLAGS) $(JANSSON_CFLAGS) $(CHECK_CFLAGS) \
	-DTEST_BUILDDIR='"$(abs_builddir)"' -DTEST_TOP_BUILDDIR='"$(abs_top_builddir)"'
pools_test_pools_CFLAGS = $(AM_CFLAGS_COMMON)
pools_test_pools_LDADD = $(top_builddir)/framework/liblcp.la $(DPDK_LIBS) $(JANSSON_LIBS) \
	$(CHECK_LIBS)

clean-local: clean-local-pools
clean-local-pools:
	-rm -rf pools/scratch-rt-*
.PHONY: clean-local-pools
