/*
 * The backend the engine runs on: the operations table gs_engine_init()
 * was given (gs_ops.h), set once and read by every part of the core that
 * submits, builds, launches, patches or times.  Core only.
 */
#ifndef GS_BACKEND_H
#define GS_BACKEND_H

#include "gs_ops.h"

/* NULL until gs_engine_init() names one. */
extern const gs_ops_t *gs_backend;

/* Whether the backend has GPU timers (the gate measures only with them). */
bool gs_backend_has_timers(void);

#endif /* GS_BACKEND_H */
