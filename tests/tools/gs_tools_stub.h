/*
 * Test-only stand-ins for the two engine functions that gs_stats.c and
 * gs_trace.c call, so that the diagnostics are tested without the engine.
 * The tests set gs_stub_seqs/gs_stub_nseqs to choose what
 * gs_engine_seq_info() reports.
 */
#ifndef GS_TOOLS_STUB_H
#define GS_TOOLS_STUB_H

#include "gs_stats.h"

extern const gs_seq_info_t *gs_stub_seqs;
extern size_t gs_stub_nseqs;

#endif /* GS_TOOLS_STUB_H */
