/*
 * Kernel names for the trace and its summaries: the backend's namer
 * (cuFuncGetName / cuKernelGetName, the HIP code object's names) asked once
 * a function, the answers kept in a small table until modules go away.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gs_common.h"
#include "gs_trace.h"

#define GS_TRACE_NAMES 4096u /* functions named; later ones are asked each time */

static const char *(*gs_trace_namer)(const gs_rec_t *r);
static pthread_mutex_t gs_trace_names_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uintptr_t func;
	char *name; /* NULL: not kept; "" when the backend had none */
} gs_trace_names[GS_TRACE_NAMES * 2];
static uint32_t gs_trace_nnames;

void gs_trace_set_namer(const char *(*fn)(const gs_rec_t *r))
{
	__atomic_store_n(&gs_trace_namer, fn, __ATOMIC_RELEASE);
}

void gs_trace_forget_names(void)
{
	pthread_mutex_lock(&gs_trace_names_mu);
	for (size_t i = 0; i < GS_ARRAY_SIZE(gs_trace_names); i++) {
		free(gs_trace_names[i].name);
		gs_trace_names[i].name = NULL;
		gs_trace_names[i].func = 0;
	}
	gs_trace_nnames = 0;
	pthread_mutex_unlock(&gs_trace_names_mu);
}

static void gs_trace_copy(char *out, size_t len, const char *s)
{
	size_t n = strlen(s);
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

void gs_trace_kernel_name(const gs_rec_t *r, char *out, size_t len)
{
	out[0] = '\0';
	const char *(*namer)(const gs_rec_t *) = __atomic_load_n(&gs_trace_namer, __ATOMIC_ACQUIRE);
	if (!r || r->kind != GS_REC_KERNEL || !namer || !len)
		return;
	uintptr_t key = (uintptr_t)r->func;
	size_t mask = GS_ARRAY_SIZE(gs_trace_names) - 1, i = (size_t)gs_mix64(key) & mask;
	pthread_mutex_lock(&gs_trace_names_mu);
	for (;; i = (i + 1) & mask) {
		if (gs_trace_names[i].name && gs_trace_names[i].func == key) {
			gs_trace_copy(out, len, gs_trace_names[i].name);
			pthread_mutex_unlock(&gs_trace_names_mu);
			return;
		}
		if (!gs_trace_names[i].name)
			break;
	}
	pthread_mutex_unlock(&gs_trace_names_mu);
	/* Asked outside the lock: the backend may call the vendor. */
	const char *n = namer(r);
	gs_trace_copy(out, len, n ? n : "");
	pthread_mutex_lock(&gs_trace_names_mu);
	if (gs_trace_nnames < GS_TRACE_NAMES) {
		for (i = (size_t)gs_mix64(key) & mask; gs_trace_names[i].name; i = (i + 1) & mask)
			if (gs_trace_names[i].func == key)
				break;
		if (!gs_trace_names[i].name) {
			char *copy = strdup(out);
			if (copy) {
				gs_trace_names[i].func = key;
				gs_trace_names[i].name = copy;
				gs_trace_nnames++;
			}
		}
	}
	pthread_mutex_unlock(&gs_trace_names_mu);
}
