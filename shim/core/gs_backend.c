/* The backend's table (gs_backend.h). */
#include "gs_backend.h"

const gs_ops_t *gs_backend;

bool gs_backend_has_timers(void)
{
	const gs_ops_t *o = gs_backend;
	return o->timer_create && o->timer_mark && o->timer_read && o->timer_destroy;
}
