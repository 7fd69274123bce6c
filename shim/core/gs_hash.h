/*
 * uthash, made non-fatal.  By default uthash calls exit(-1) when it cannot
 * allocate a table, which would end the application over graphshim's own
 * bookkeeping.  Every file of graphshim includes uthash through this header:
 * a failed insertion then leaves the element out of the table and raises
 * gs_hash_oom (per thread); each HASH_ADD site checks it and carries on
 * without that entry.  (Growing a table that exists cannot fail the
 * insertion in this mode: the table keeps its buckets.)
 */
#ifndef GS_HASH_H
#define GS_HASH_H

#ifdef uthash_fatal
#error "include gs_hash.h before anything that includes uthash.h"
#endif

#include <stdbool.h>

extern _Thread_local bool gs_hash_oom;

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (gs_hash_oom = true)
#include <uthash.h>

/* Clear the flag before an insertion. */
#define GS_HASH_TRY() (gs_hash_oom = false)

#endif /* GS_HASH_H */
