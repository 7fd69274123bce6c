/*
 * Kernel parameter layouts from AMDGPU code objects: the NT_AMDGPU_METADATA
 * note (msgpack) of the ELF, found directly or inside a clang offload
 * bundle (what hipcc --genco and the fat binaries of HIP programs hold).
 * No HIP header is needed here, so the tests use it on its own.
 */
#ifndef GS_HIP_CODEOBJ_H
#define GS_HIP_CODEOBJ_H

#include "gs_common.h"
#include "gs_rec.h"

typedef struct gs_hip_kernel {
	char *name;                 /* .name (the symbol without ".kd") */
	const gs_layout_t *layout;  /* visible arguments only; freed with the table */
} gs_hip_kernel_t;

typedef struct gs_hip_codeobj {
	size_t n;
	gs_hip_kernel_t *k;
} gs_hip_codeobj_t;

/*
 * Bytes an image spans, read from its own headers (hipModuleLoadData gets
 * no size): an ELF's section table end or a bundle's last entry.  0 when the
 * image is neither.
 */
size_t gs_hip_codeobj_span(const void *image);

/* Parse an ELF or offload bundle image of `size` bytes; true on failure. */
bool gs_hip_codeobj_parse(const void *image, size_t size, gs_hip_codeobj_t *co);

/* Parse a file (hipModuleLoad); true on failure. */
bool gs_hip_codeobj_parse_file(const char *path, gs_hip_codeobj_t *co);

/* The layout of kernel `name` (with or without ".kd"), or NULL. */
const gs_layout_t *gs_hip_codeobj_find(const gs_hip_codeobj_t *co, const char *name);

/*
 * Free the names, the layouts and the table.  The backend frees a module's
 * table only after the engine forgot every sequence (module unload), so no
 * record points at these layouts any more.
 */
void gs_hip_codeobj_free(gs_hip_codeobj_t *co);

#endif /* GS_HIP_CODEOBJ_H */
