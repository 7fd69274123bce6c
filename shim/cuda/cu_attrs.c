/*
 * Launch attributes (cuLaunchKernelEx) as part of a record.  The ones a
 * graph kernel node can carry (cluster dimensions and scheduling policy,
 * cooperative, priority, memory sync domain, access policy window, the
 * hints) are kept in an interned, canonical attribute set that the record
 * names in aux[GS_CU_AUX_ATTRS]: the set is part of the record's shape, so
 * a launch whose attributes differ is a different operation, revalidated
 * like a grid.  Programmatic stream serialization is a flag of the set and
 * becomes a programmatic edge from the node before it (what the driver
 * makes of it under stream capture).  An attribute no graph node can carry
 * (programmatic or launch-completion events, which name an event the
 * application waits on; device-updatable nodes; anything newer than this
 * file) makes the launch a boundary, named in the trace.
 *
 * Sets are canonical (only the value's meaningful bytes, in the caller's
 * order, IGNORE entries dropped), so equal attributes give the same
 * pointer whatever garbage the caller left in the unused bytes of its
 * unions, and the table stays as small as the distinct sets a program uses.
 * Sets are never freed: records and graphs point at them.
 */
#include <pthread.h>
#include <stdlib.h>
#include "gs_hash.h"

#include "cu_internal.h"

typedef struct gs_cu_iattrs {
	UT_hash_handle hh;
	size_t klen;
	gs_cu_attrs_t s; /* must be last: flexible array */
} gs_cu_iattrs_t;

static gs_cu_iattrs_t *gs_cu_attr_tab;
static pthread_mutex_t gs_cu_attr_lock = PTHREAD_MUTEX_INITIALIZER;

/* The last set this thread interned, so a loop of equal launches skips the lock. */
static __thread const gs_cu_attrs_t *gs_cu_attr_last;

/* Every attribute id cuda.h names, for messages and the trace. */
#define GS_CU_ATTR_IDS(X)                                                    \
	X(IGNORE) X(ACCESS_POLICY_WINDOW) X(COOPERATIVE) X(SYNCHRONIZATION_POLICY) \
	X(CLUSTER_DIMENSION) X(CLUSTER_SCHEDULING_POLICY_PREFERENCE)        \
	X(PROGRAMMATIC_STREAM_SERIALIZATION) X(PROGRAMMATIC_EVENT) X(PRIORITY) \
	X(MEM_SYNC_DOMAIN_MAP) X(MEM_SYNC_DOMAIN) X(PREFERRED_CLUSTER_DIMENSION) \
	X(LAUNCH_COMPLETION_EVENT) X(DEVICE_UPDATABLE_KERNEL_NODE)          \
	X(PREFERRED_SHARED_MEMORY_CARVEOUT) X(NVLINK_UTIL_CENTRIC_SCHEDULING)

const char *gs_cu_attr_name(unsigned id)
{
	switch (id) {
#define GS_X(n)                        \
	case CU_LAUNCH_ATTRIBUTE_##n: \
		return #n;
	GS_CU_ATTR_IDS(GS_X)
#undef GS_X
	}
	return "unknown";
}

const char *gs_cu_attr_api(unsigned id)
{
	/* Logged once per attribute (ids are small; others share the last slot). */
	static unsigned char logged[32];
	if (!__atomic_exchange_n(&logged[id < 31 ? id : 31], 1, __ATOMIC_RELAXED))
		gs_log(GS_LOG_INFO, "cuda: launches with the attribute %s pass through "
		       "(a graph node cannot carry it)", gs_cu_attr_name(id));
	switch (id) {
#define GS_X(n)                        \
	case CU_LAUNCH_ATTRIBUTE_##n: \
		return "cuLaunchKernelEx[" #n "]";
	GS_CU_ATTR_IDS(GS_X)
#undef GS_X
	}
	return "cuLaunchKernelEx[unknown attribute]";
}

/* What a launch attribute becomes in a graph. */
enum { GS_CU_ATTR_DROP = 0, GS_CU_ATTR_NODE = 1, GS_CU_ATTR_EDGE = 2 };

/*
 * The attributes a graph can express, and how many leading bytes of the
 * value union are meaningful for each (the rest, and any padding, the
 * caller may have left uninitialised).  Ids not listed are boundaries:
 * PROGRAMMATIC_EVENT and LAUNCH_COMPLETION_EVENT (an event the application
 * records through the launch), SYNCHRONIZATION_POLICY (streams only),
 * DEVICE_UPDATABLE_KERNEL_NODE (graphs only: the driver refuses it on a
 * launch), and ids newer than this file.
 */
#define GS_CU_VAL_BYTES(m) (offsetof(CUlaunchAttributeValue, m) + sizeof(((CUlaunchAttributeValue *)0)->m))
static const struct {
	unsigned id;
	unsigned char kind;
	unsigned char bytes;
} gs_cu_attr_kinds[] = {
	{ CU_LAUNCH_ATTRIBUTE_IGNORE, GS_CU_ATTR_DROP, 0 },
	{ CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, GS_CU_ATTR_NODE,
	  GS_CU_VAL_BYTES(accessPolicyWindow.missProp) },
	{ CU_LAUNCH_ATTRIBUTE_COOPERATIVE, GS_CU_ATTR_NODE, GS_CU_VAL_BYTES(cooperative) },
	{ CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, GS_CU_ATTR_NODE, GS_CU_VAL_BYTES(clusterDim) },
	{ CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, GS_CU_ATTR_NODE,
	  GS_CU_VAL_BYTES(clusterSchedulingPolicyPreference) },
	{ CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, GS_CU_ATTR_EDGE,
	  GS_CU_VAL_BYTES(programmaticStreamSerializationAllowed) },
	{ CU_LAUNCH_ATTRIBUTE_PRIORITY, GS_CU_ATTR_NODE, GS_CU_VAL_BYTES(priority) },
	{ CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, GS_CU_ATTR_NODE, GS_CU_VAL_BYTES(memSyncDomainMap) },
	{ CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, GS_CU_ATTR_NODE, GS_CU_VAL_BYTES(memSyncDomain) },
	{ CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION, GS_CU_ATTR_NODE,
	  GS_CU_VAL_BYTES(preferredClusterDim) },
	{ CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, GS_CU_ATTR_NODE,
	  GS_CU_VAL_BYTES(sharedMemCarveout) },
	{ CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING, GS_CU_ATTR_NODE,
	  GS_CU_VAL_BYTES(nvlinkUtilCentricScheduling) },
};

/*
 * Copy the meaningful bytes of one attribute into a zeroed *out.  Returns
 * its kind, GS_CU_ATTR_DROP for an entry that changes nothing, -1 for one
 * no graph can express.
 */
static int gs_cu_attr_canon(const CUlaunchAttribute *in, CUlaunchAttribute *out)
{
	for (size_t i = 0; i < GS_ARRAY_SIZE(gs_cu_attr_kinds); i++) {
		if (gs_cu_attr_kinds[i].id != (unsigned)in->id)
			continue;
		out->id = in->id;
		memcpy(&out->value, &in->value, gs_cu_attr_kinds[i].bytes);
		/* Serialization asked with 0 is the ordinary full dependency. */
		if (gs_cu_attr_kinds[i].kind == GS_CU_ATTR_EDGE &&
		    !in->value.programmaticStreamSerializationAllowed)
			return GS_CU_ATTR_DROP;
		return gs_cu_attr_kinds[i].kind;
	}
	return -1;
}

/* Bytes of a set's identity: everything up to the end of its last attribute. */
static size_t gs_cu_attrs_klen(uint32_t n)
{
	return offsetof(gs_cu_attrs_t, a) + n * sizeof(CUlaunchAttribute);
}

int gs_cu_attrs_get(const CUlaunchAttribute *in, unsigned n, const gs_cu_attrs_t **out,
		    unsigned *bad)
{
	*out = NULL;
	if (!n)
		return 0;
	if (!in || n > GS_CU_MAX_ATTRS) {
		*bad = in ? in[0].id : CU_LAUNCH_ATTRIBUTE_IGNORE;
		return -1;
	}
	/* Canonical form on the stack: the header and up to GS_CU_MAX_ATTRS entries. */
	union {
		gs_cu_attrs_t s;
		unsigned char b[offsetof(gs_cu_attrs_t, a) + GS_CU_MAX_ATTRS * sizeof(CUlaunchAttribute)];
	} c;
	memset(&c, 0, sizeof(c));
	for (unsigned i = 0; i < n; i++) {
		int k = gs_cu_attr_canon(&in[i], &c.s.a[c.s.n]);
		if (k < 0) {
			*bad = in[i].id;
			return -1;
		}
		if (k == GS_CU_ATTR_NODE) {
			c.s.n++;
			continue;
		}
		/* Not a node attribute: its slot is reused, zeroed again. */
		memset(&c.s.a[c.s.n], 0, sizeof(c.s.a[0]));
		if (k == GS_CU_ATTR_EDGE)
			c.s.pss = 1;
	}
	if (!c.s.n && !c.s.pss)
		return 0; /* only entries that change nothing: a plain launch */
	size_t klen = gs_cu_attrs_klen(c.s.n);
	const gs_cu_attrs_t *last = gs_cu_attr_last;
	/* The same count first: a shorter cached set must not be read past its end. */
	if (last && last->n == c.s.n && !memcmp(last, &c.s, klen)) {
		*out = last;
		return 0;
	}
	gs_cu_iattrs_t *it = NULL;
	pthread_mutex_lock(&gs_cu_attr_lock);
	HASH_FIND(hh, gs_cu_attr_tab, &c.s, klen, it);
	if (!it) {
		it = calloc(1, offsetof(gs_cu_iattrs_t, s) + klen);
		if (it) {
			memcpy(&it->s, &c.s, klen);
			it->klen = klen;
			GS_HASH_TRY();
			HASH_ADD_KEYPTR(hh, gs_cu_attr_tab, &it->s, klen, it);
			/* A set not in the table is still valid; it is simply not shared. */
		}
	}
	pthread_mutex_unlock(&gs_cu_attr_lock);
	if (!it) {
		*bad = CU_LAUNCH_ATTRIBUTE_IGNORE;
		return -1; /* no memory: the launch passes through */
	}
	gs_cu_attr_last = &it->s;
	*out = &it->s;
	return 0;
}

CUresult gs_cu_attrs_apply(CUgraphNode node, const gs_cu_attrs_t *at)
{
	if (!at || !at->n)
		return CUDA_SUCCESS;
	if (!gs_cu_real.cuGraphKernelNodeSetAttribute)
		return CUDA_ERROR_NOT_SUPPORTED;
	for (uint32_t i = 0; i < at->n; i++) {
		CUresult st = gs_cu_real.cuGraphKernelNodeSetAttribute(
			node, (CUkernelNodeAttrID)at->a[i].id, &at->a[i].value);
		if (st != CUDA_SUCCESS) {
			/* Which attribute, for the refusal's note (cu_ops.c). */
			static unsigned told;
			if (gs_log_first(&told, 4))
				gs_log(GS_LOG_WARN, "cuda: the driver would not set %s on a graph kernel node (status %d)",
				       gs_cu_attr_name(at->a[i].id), (int)st);
			return st;
		}
	}
	return CUDA_SUCCESS;
}

unsigned gs_cu_attrs_fill(const gs_cu_attrs_t *at, CUlaunchAttribute *out)
{
	unsigned n = 0;
	if (!at)
		return 0;
	for (uint32_t i = 0; i < at->n; i++)
		out[n++] = at->a[i];
	if (at->pss) {
		memset(&out[n], 0, sizeof(out[n]));
		out[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
		out[n].value.programmaticStreamSerializationAllowed = 1;
		n++;
	}
	return n;
}
