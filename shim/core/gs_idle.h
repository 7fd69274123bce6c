/*
 * The idle watchdog.  A launch graphshim holds reaches the GPU only when
 * its chunk is complete or a boundary comes; a program that stops calling
 * in the middle of a step, because it waits for its GPU without a CUDA
 * call (spinning on mapped host memory that a held kernel writes) or does
 * host work there, would wait on graphshim: forever in the first case.  A
 * thread started with the first held launch looks every
 * GRAPHSHIM_IDLE_US / 2; a stream that held launches at two looks in a
 * row without holding another between them has them submitted, as
 * another thread's synchronize would (gs_engine_idle_scan): its match goes
 * on, the rest of the chunk goes eagerly.  GRAPHSHIM_IDLE_US=0: no
 * watchdog.  See docs/how-it-works.md, "The idle watchdog".
 */
#ifndef GS_IDLE_H
#define GS_IDLE_H

/* Start the watchdog unless it runs (a launch that holds, cheap after the first). */
void gs_idle_start(void);
/* Stop it and wait for it (the engine's end); none starts again until gs_idle_allow. */
void gs_idle_stop(void);
/* The engine begins (again): the watchdog may start with the next held launch. */
void gs_idle_allow(void);
/* Whether it runs now: held work never waits for a call that does not come. */
bool gs_idle_running(void);
/* In a forked child: forget it without touching its lock. */
void gs_idle_forget(void);

#endif /* GS_IDLE_H */
