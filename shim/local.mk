# libgraphshim.so: the core plus whichever backends configure found.  Only
# the hooks are exported (hidden visibility plus an explicit version script).
lib_LTLIBRARIES += libgraphshim.la
libgraphshim_la_SOURCES = shim/gs_main.c
libgraphshim_la_CPPFLAGS = $(CORE_CPPFLAGS)
libgraphshim_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libgraphshim_la_LIBADD = libgscore.la $(GS_BACKEND_LIBS)
libgraphshim_la_LDFLAGS = $(AM_LDFLAGS) -avoid-version -module -shared \
	-Wl,--version-script=$(srcdir)/shim/graphshim.map -Wl,-z,nodelete
EXTRA_DIST += shim/graphshim.map
