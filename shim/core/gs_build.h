/*
 * The background builder: one thread that builds and instantiates the
 * graphs of armed sequences (gs_build.c), so that learning a long
 * sequence never stalls the application's launch path.
 */
#ifndef GS_BUILD_H
#define GS_BUILD_H

#include "gs_common.h"

typedef struct gs_seq gs_seq_t;

/* Start the builder thread (engine init). */
void gs_build_start(void);
/* Queue q (state BUILDING) for the builder; true when no thread could run. */
bool gs_build_submit(gs_seq_t *q);
/* Wait until every queued build is published. */
void gs_build_wait(void);
/* Hold the builder while the application captures (see gs_build.c). */
void gs_build_pause(void);
void gs_build_resume(void);
/* Wait, then stop the builder thread. */
void gs_build_stop(void);
/* In a forked child: forget the builder without touching its locks. */
void gs_build_forget(void);

#endif /* GS_BUILD_H */
