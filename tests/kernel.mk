# L2: plugins against the Linux kernel in a network namespace (root; skip 77 otherwise)
TESTS += kernel/port_kernel.sh
EXTRA_DIST += kernel/port_kernel.sh

# L2 TCP: the tcp stage (plugins/tcp) against the kernel's TCP over net_tap in a
# namespace (tests/kernel/tcp_lib.sh), with tcp_app as the application stage and
# tests/kernel/tcp_peer.py as the kernel-side peer. Root only (skip 77 otherwise).
TCP_KERNEL_TESTS = \
	kernel/tcp_ping.sh \
	kernel/tcp_recv.sh \
	kernel/tcp_send.sh \
	kernel/tcp_listen.sh \
	kernel/tcp_many.sh \
	kernel/tcp_rst.sh \
	kernel/tcp_loss.sh
TESTS += $(TCP_KERNEL_TESTS)
EXTRA_DIST += $(TCP_KERNEL_TESTS) kernel/tcp_lib.sh kernel/tcp_peer.py

# test-only plugin: loaded through the configs' plugin_path (kernel/plugins/.libs)
check_LTLIBRARIES += kernel/plugins/tcp_app.la
kernel_plugins_tcp_app_la_SOURCES = kernel/plugins/tcp_app.c
kernel_plugins_tcp_app_la_CPPFLAGS = -I$(top_srcdir)/framework/include
kernel_plugins_tcp_app_la_CFLAGS = $(AM_CFLAGS_COMMON) $(DPDK_CFLAGS) $(CRYPTO_CFLAGS) -fvisibility=hidden
kernel_plugins_tcp_app_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere \
	-export-symbols-regex '^lcp_plugin_descriptor$$' $(SAN_LDFLAGS)
kernel_plugins_tcp_app_la_LIBADD = $(top_builddir)/framework/liblcp.la $(DPDK_LIBS) $(CRYPTO_LIBS)
