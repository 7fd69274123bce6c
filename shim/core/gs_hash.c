/* The flag of gs_hash.h: set when uthash could not allocate a table. */
#include "gs_hash.h"

_Thread_local bool gs_hash_oom;
