# docs: the reference documents, installed under $(docdir), and the
# graphshim(7) manual page.  Their agreement with the headers is checked by
# tests/tools/test_docs.sh.
dist_doc_DATA += docs/configuration.md docs/troubleshooting.md docs/tools.md \
	docs/how-it-works.md docs/architecture.md docs/limits.md \
	docs/cuda-backend.md docs/hip-backend.md docs/performance.md
# The manual pages name the installation's own paths and version: made
# from their .in files by make, since configure's libdir is `${exec_prefix}/lib`
# until make expands it.
man_MANS = docs/graphshim.7 tools/graphshim.1
EXTRA_DIST += docs/graphshim.7.in tools/graphshim.1.in
CLEANFILES += docs/graphshim.7 tools/graphshim.1
GS_MAN_SUBST = sed -e 's|@libdir[@]|$(libdir)|g' -e 's|@docdir[@]|$(docdir)|g' \
	-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g'
docs/graphshim.7: $(srcdir)/docs/graphshim.7.in Makefile
	$(AM_V_GEN)$(MKDIR_P) docs && $(GS_MAN_SUBST) $(srcdir)/docs/graphshim.7.in >$@.tmp && mv $@.tmp $@
tools/graphshim.1: $(srcdir)/tools/graphshim.1.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && $(GS_MAN_SUBST) $(srcdir)/tools/graphshim.1.in >$@.tmp && mv $@.tmp $@
