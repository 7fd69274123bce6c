/*
 * libgraphshim.so's own entry points.  The backends start the engine on
 * their first hook call; this file only makes sure held work is submitted
 * when the library is unloaded or the process ends without exit handlers.
 */
#include "config.h"
#include "gs_common.h"
#include "gs_engine.h"

GS_EXPORT const char *graphshim_version(void);

const char *graphshim_version(void)
{
	return PACKAGE_VERSION;
}

__attribute__((destructor)) static void gs_main_fini(void)
{
	gs_engine_fini();
}
