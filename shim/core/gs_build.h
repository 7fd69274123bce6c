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
/*
 * Wait until every queued build is published.  Every wait for the builder
 * (this one, pause, stop, a free) says once a build that the build in
 * progress has gone on for 5 s, and stops waiting for one that has gone on
 * for 30 s: a driver call that does not return (gs_build.c).
 */
void gs_build_wait(void);
/* Hold the builder while the application captures (see gs_build.c). */
void gs_build_pause(void);
void gs_build_resume(void);
/*
 * Wait, then stop the builder thread.  A builder that stays inside one
 * build for 30 s is left behind: true then, and the caller must not free
 * what the builder may still touch.
 */
bool gs_build_stop(void);
/* Those two limits, in ms (tests). */
void gs_build_patience(unsigned warn_ms, unsigned leave_ms);
/*
 * Around a call that frees memory (a vendor call of the FREE class): a
 * graph is never instantiated while the application frees memory that one
 * of its copy or memset nodes was made on (see gs_build.c).
 */
bool gs_build_free_enter(void);
/* Pass what enter returned: false when it did not wait for a builder
 * stuck in the driver for 30 s (the free goes on without the lock). */
void gs_build_free_leave(bool locked);
/* In a forked child: forget the builder without touching its locks. */
void gs_build_forget(void);

#endif /* GS_BUILD_H */
