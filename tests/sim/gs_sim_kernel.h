/*
 * The CPU simulator's kernel ABI.  A simulator "module" is a shared object
 * exporting a table of C functions, one per kernel, looked up by name:
 *
 *   const gs_sim_kernel_t gs_sim_kernels[] = {
 *       { "k_add", k_add, 3, { 8, 8, 4 } },
 *       { NULL }
 *   };
 *
 * The simulator's cuModuleLoad(path) loads "<path without extension>.sim.so"
 * when that file exists, otherwise path itself, so a program that loads
 * "dir/tiny.cubin" on a GPU loads "dir/tiny.sim.so" on the simulator with no
 * change.  Parameters are laid out as the CUDA ABI lays them out (each at
 * the next multiple of its own size, up to 8), which is what the
 * simulator's cuFuncGetParamInfo reports.  A kernel runs the whole grid
 * serially on the stream's worker thread.
 */
#ifndef GS_SIM_KERNEL_H
#define GS_SIM_KERNEL_H

typedef struct gs_sim_dim {
	unsigned grid[3];
	unsigned block[3];
	unsigned shmem;
	/*
	 * Launch attributes a kernel can observe (CUDA front only; zero when
	 * none): the cluster dimension, which must divide the grid, and the
	 * priority.  A kernel that folds them into its result makes a replay
	 * that lost them change memory, as a GPU kernel using clusters would.
	 */
	unsigned cluster[3];
	int priority;
	int cooperative; /* launched cooperatively (its grid fits on the device at once) */
} gs_sim_dim_t;

/* params[i] points at parameter i, as kernelParams does on a GPU. */
typedef void (*gs_sim_kernel_fn)(const gs_sim_dim_t *dim, void **params);

#define GS_SIM_MAX_PARAMS 32

typedef struct gs_sim_kernel {
	const char *name;
	gs_sim_kernel_fn fn;
	unsigned nparams;
	unsigned size[GS_SIM_MAX_PARAMS];
} gs_sim_kernel_t;

#endif /* GS_SIM_KERNEL_H */
