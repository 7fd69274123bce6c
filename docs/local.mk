# docs: the reference documents, installed under $(docdir), and the
# graphshim(7) manual page.  Their agreement with the headers is checked by
# tests/tools/test_docs.sh.
dist_doc_DATA += docs/configuration.md docs/troubleshooting.md docs/tools.md \
	docs/how-it-works.md docs/architecture.md docs/limits.md \
	docs/cuda-backend.md docs/hip-backend.md docs/performance.md
dist_man_MANS += docs/graphshim.7
