# The vendor-neutral core, built without any vendor include path.
noinst_LTLIBRARIES += libgscore.la
libgscore_la_CPPFLAGS = $(CORE_CPPFLAGS)
libgscore_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libgscore_la_SOURCES = \
	shim/core/gs_common.h shim/core/gs_clock.h \
	shim/core/gs_backend.h shim/core/gs_backend.c \
	shim/core/gs_flush.h shim/core/gs_flush.c \
	shim/core/gs_fmt.h shim/core/gs_fmt.c \
	shim/core/gs_out.h shim/core/gs_out.c \
	shim/core/gs_sig.h shim/core/gs_sig.c \
	shim/core/gs_rec.h shim/core/gs_rec.c \
	shim/core/gs_event.h shim/core/gs_event.c \
	shim/core/gs_ops.h \
	shim/core/gs_engine.h shim/core/gs_engine.c \
	shim/core/gs_lane.h \
	shim/core/gs_stream.h shim/core/gs_stream.c \
	shim/core/gs_cold.h shim/core/gs_cold.c \
	shim/core/gs_thrift.h shim/core/gs_thrift.c \
	shim/core/gs_learn.h shim/core/gs_learn.c \
	shim/core/gs_match.h shim/core/gs_match.c \
	shim/core/gs_replay.h shim/core/gs_replay.c \
	shim/core/gs_variant.h shim/core/gs_variant.c \
	shim/core/gs_seq.h shim/core/gs_seq.c \
	shim/core/gs_arm.h shim/core/gs_arm.c \
	shim/core/gs_build.h shim/core/gs_build.c \
	shim/core/gs_idle.h shim/core/gs_idle.c \
	shim/core/gs_adopt.h shim/core/gs_adopt.c \
	shim/core/gs_gate.h shim/core/gs_gate.c \
	shim/core/gs_period.h shim/core/gs_period.c \
	shim/core/gs_hash.h shim/core/gs_hash.c \
	shim/core/gs_self.h shim/core/gs_self.c \
	shim/core/gs_submit.h shim/core/gs_submit.c \
	shim/core/gs_config.h shim/core/gs_config.c \
	shim/core/gs_log.h shim/core/gs_log.c \
	shim/core/gs_stats.h shim/core/gs_stats.c \
	shim/core/gs_trace.h shim/core/gs_trace.c \
	shim/core/gs_names.c
