/*
 * Simulator modules: shared objects exporting gs_sim_kernels (see
 * gs_sim_kernel.h), loaded with dlopen, and the parameter layout of their
 * kernels (each parameter at the next multiple of min(size, 8)).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_core.h"

gs_sim_err_t gs_sim_module_from_table(gs_sim_module_t **out, const gs_sim_kernel_t *tab)
{
	gs_sim_module_t *m;
	size_t n = 0;
	while (tab[n].name)
		n++;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->funcs = calloc(n ? n : 1, sizeof(*m->funcs))) ||
	    !(m->kerns = calloc(n ? n : 1, sizeof(*m->kerns)))) {
		if (m)
			free(m->funcs);
		free(m);
		return GS_SIM_ENOMEM;
	}
	m->n = n;
	for (size_t i = 0; i < n; i++) {
		gs_sim_func_t *f = &m->funcs[i];
		size_t off = 0;
		f->k = &tab[i];
		f->mod = m;
		for (unsigned p = 0; p < tab[i].nparams && p < GS_SIM_MAX_PARAMS; p++) {
			size_t sz = tab[i].size[p], al = sz < 8 ? sz : 8;
			if (al == 0)
				al = 1;
			off = (off + al - 1) / al * al;
			f->off[p] = off;
			off += sz;
		}
		f->argsize = off;
		m->kerns[i].fn = f;
		gs_sim_reg_add(f, GS_SIM_H_FUNC);
		gs_sim_reg_add(&m->kerns[i], GS_SIM_H_KERN);
	}
	*out = m;
	return GS_SIM_OK;
}

static gs_sim_err_t module_from_dl(gs_sim_module_t **out, void *dl)
{
	const gs_sim_kernel_t *tab = dlsym(dl, "gs_sim_kernels");
	gs_sim_err_t err = tab ? gs_sim_module_from_table(out, tab) : GS_SIM_EIMAGE;
	if (err) {
		dlclose(dl);
		return err;
	}
	(*out)->dl = dl;
	gs_sim_reg_add(*out, GS_SIM_H_MODULE);
	return GS_SIM_OK;
}

static gs_sim_err_t module_dlopen(gs_sim_module_t **out, const char *path)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return access(path, F_OK) == 0 ? GS_SIM_EIMAGE : GS_SIM_ENOTFOUND;
	return module_from_dl(out, dl);
}

/* "dir/tiny.cubin" loads "dir/tiny.sim.so" when that exists, so programs
 * keep the file names they use on a GPU. */
gs_sim_err_t gs_sim_module_load_file(gs_sim_module_t **out, const char *path)
{
	if (!path)
		return GS_SIM_EINVAL;
	size_t len = strlen(path);
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(path, '.');
	size_t stem = (dot && (!slash || dot > slash)) ? (size_t)(dot - path) : len;
	char *alt = malloc(stem + sizeof(".sim.so"));
	if (!alt)
		return GS_SIM_ENOMEM;
	memcpy(alt, path, stem);
	strcpy(alt + stem, ".sim.so");
	gs_sim_err_t err;
	if (access(alt, F_OK) == 0)
		err = module_dlopen(out, alt);
	else
		err = module_dlopen(out, path);
	free(alt);
	return err;
}

gs_sim_err_t gs_sim_module_load_image(gs_sim_module_t **out, const void *image)
{
	const char *s = image;
	if (s && gs_sim_devupd_image(s)) {
		if (gs_sim_fault(GS_SIM_F_DEVUPD))
			return GS_SIM_EIMAGE; /* as a driver whose JIT will not take the PTX */
		gs_sim_err_t err = gs_sim_module_from_table(out, gs_sim_devupd_kernels);
		if (!err)
			gs_sim_reg_add(*out, GS_SIM_H_MODULE);
		return err;
	}
	if (!s || strncmp(s, "GSSIM:", 6) != 0)
		return GS_SIM_EIMAGE;
	gs_sim_err_t err = module_dlopen(out, s + 6);
	return err == GS_SIM_ENOTFOUND ? GS_SIM_EIMAGE : err;
}

void gs_sim_module_unload(gs_sim_module_t *m)
{
	gs_sim_reg_del(m);
	for (size_t i = 0; i < m->n; i++) {
		gs_sim_reg_del(&m->funcs[i]);
		gs_sim_reg_del(&m->kerns[i]);
	}
	if (m->dl)
		dlclose(m->dl);
	free(m->funcs);
	free(m->kerns);
	free(m);
}

gs_sim_func_t *gs_sim_module_func(gs_sim_module_t *m, const char *name)
{
	for (size_t i = 0; name && i < m->n; i++)
		if (strcmp(m->funcs[i].k->name, name) == 0)
			return &m->funcs[i];
	return NULL;
}

unsigned char *gs_sim_func_pack(const gs_sim_func_t *fn, void *const *params)
{
	unsigned char *b = calloc(1, fn->argsize ? fn->argsize : 1);
	if (!b)
		return NULL;
	for (unsigned p = 0; p < fn->k->nparams; p++)
		memcpy(b + fn->off[p], params[p], fn->k->size[p]);
	return b;
}

unsigned char *gs_sim_func_pack_buffer(const gs_sim_func_t *fn, const void *buf, size_t size)
{
	if (size < fn->argsize)
		return NULL;
	unsigned char *b = calloc(1, fn->argsize ? fn->argsize : 1);
	if (b)
		memcpy(b, buf, fn->argsize);
	return b;
}

int gs_sim_func_pack_extra(const gs_sim_func_t *fn, void **extra, const void *m_ptr,
			   const void *m_size, const void *m_end, unsigned char **out)
{
	const void *buf = NULL;
	size_t size = 0;
	bool have_size = false;
	for (size_t i = 0; extra[i] != m_end; i += 2) {
		if (extra[i] == m_ptr) {
			buf = extra[i + 1];
		} else if (extra[i] == m_size) {
			if (!extra[i + 1])
				return GS_SIM_PACK_INVALID;
			size = *(const size_t *)extra[i + 1];
			have_size = true;
		} else {
			return GS_SIM_PACK_INVALID;
		}
	}
	if (!buf || !have_size || size < fn->argsize)
		return GS_SIM_PACK_INVALID;
	*out = gs_sim_func_pack_buffer(fn, buf, size);
	return *out ? 0 : GS_SIM_PACK_NOMEM;
}

int gs_sim_kernel_work(gs_sim_work_t *w, const gs_sim_func_t *fn, const unsigned grid[3],
		       const unsigned block[3], unsigned shmem, void **params, void **extra,
		       const void *m_ptr, const void *m_size, const void *m_end)
{
	unsigned char *args;
	if (params && extra)
		return GS_SIM_PACK_INVALID;
	if (params) {
		for (unsigned i = 0; i < fn->k->nparams; i++)
			if (!params[i])
				return GS_SIM_PACK_INVALID;
		args = gs_sim_func_pack(fn, params);
		if (!args)
			return GS_SIM_PACK_NOMEM;
	} else if (extra) {
		int e = gs_sim_func_pack_extra(fn, extra, m_ptr, m_size, m_end, &args);
		if (e)
			return e;
	} else if (fn->k->nparams == 0) {
		args = calloc(1, 1);
		if (!args)
			return GS_SIM_PACK_NOMEM;
	} else {
		return GS_SIM_PACK_INVALID;
	}
	*w = (gs_sim_work_t){ .kind = GS_SIM_W_KERNEL };
	w->u.kern.fn = fn;
	w->u.kern.args = args;
	memcpy(w->u.kern.dim.grid, grid, sizeof(w->u.kern.dim.grid));
	memcpy(w->u.kern.dim.block, block, sizeof(w->u.kern.dim.block));
	w->u.kern.dim.shmem = shmem;
	return 0;
}
