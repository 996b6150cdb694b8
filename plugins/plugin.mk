# Included by every plugins/<name>/Makefile.am. A plugin is one .so exporting
# only lcp_plugin_descriptor, installed into $(plugindir) (configure
# --with-plugindir, default $(pkglibdir)) without its .la.
lcpplugindir = $(plugindir)
PLUGIN_CPPFLAGS = -I$(top_srcdir)/framework/include -I$(top_srcdir)/stack/include
PLUGIN_CFLAGS = $(AM_CFLAGS_COMMON) $(DPDK_CFLAGS) -fvisibility=hidden
PLUGIN_LDFLAGS = -module -avoid-version -shared \
	-export-symbols-regex '^lcp_plugin_descriptor$$' $(SAN_LDFLAGS)
PLUGIN_LIBADD = $(top_builddir)/framework/liblcp.la $(DPDK_LIBS)

install-data-hook:
	for p in $(lcpplugin_LTLIBRARIES); do rm -f "$(DESTDIR)$(lcpplugindir)/$$p"; done

uninstall-local:
	for p in $(lcpplugin_LTLIBRARIES); do rm -f "$(DESTDIR)$(lcpplugindir)/$${p%.la}.so"; done
