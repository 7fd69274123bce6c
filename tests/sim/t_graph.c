/* Explicit graphs: build, instantiate, launch as one stream op, patch
 * (affects only later launches), update, destroy while in flight. */
#include "t_common.h"

static CUDA_KERNEL_NODE_PARAMS kp(CUfunction f, void **args)
{
	CUDA_KERNEL_NODE_PARAMS p;
	memset(&p, 0, sizeof(p));
	p.func = f;
	p.gridDimX = p.gridDimY = p.gridDimZ = 1;
	p.blockDimX = 32;
	p.blockDimY = p.blockDimZ = 1;
	p.kernelParams = args;
	return p;
}

static atomic_int host_calls;
static void host_node(void *arg)
{
	atomic_fetch_add(&host_calls, 1);
}

/* The device updater's image as the simulator recognises it (graphshim
 * loads its PTX; only the entries' names matter here). */
static const char du_image[] =
	"// t_graph\n.entry gs_du_apply32 (\n.entry gs_du_apply512 (\n.entry gs_du_apply1360 (\n";

typedef struct du_entry {
	uint64_t node;
	uint32_t off, size;
	uint64_t value;
} du_entry_t;
typedef struct du_args16 {
	uint32_t n, pad;
	du_entry_t e[32];
} du_args32_t;

static CUgraphDeviceNode devupd(CUgraphNode n)
{
	CUkernelNodeAttrValue v;
	memset(&v, 0, sizeof(v));
	v.deviceUpdatableKernelNode.deviceUpdatable = 1;
	CHECK(cuGraphKernelNodeSetAttribute(n, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v));
	memset(&v, 0, sizeof(v));
	CHECK(cuGraphKernelNodeGetAttribute(n, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v));
	EXPECT(v.deviceUpdatableKernelNode.deviceUpdatable == 1 && v.deviceUpdatableKernelNode.devNode);
	return v.deviceUpdatableKernelNode.devNode;
}

/*
 * Device-updatable nodes behind an updater node of the same graph: the
 * updater's entries change the nodes after it in the same launch and in
 * later ones, until the host sets a node again; a disabled node runs
 * nothing; such a graph is instantiated once and takes no whole update.
 */
static void device_updates(CUstream s)
{
	CUmodule m;
	CUfunction upd, big;
	CHECK(cuModuleLoadData(&m, du_image));
	CHECK(cuModuleGetFunction(&upd, m, "gs_du_apply32"));
	CHECK(cuModuleGetFunction(&big, m, "gs_du_apply512"));
	size_t off, size;
	CHECK(cuFuncGetParamInfo(upd, 0, &off, &size));
	EXPECT(off == 0 && size == sizeof(du_args32_t));
	CHECK(cuFuncGetParamInfo(big, 0, &off, &size));
	EXPECT(off == 0 && size == 8 + 512 * sizeof(du_entry_t));
	CUfunction large;
	CHECK(cuModuleGetFunction(&large, m, "gs_du_apply1360"));
	CHECK(cuFuncGetParamInfo(large, 0, &off, &size));
	EXPECT(off == 0 && size == 8 + 1360 * sizeof(du_entry_t));

	CUdeviceptr a;
	unsigned n = 8;
	int v = 3, inc = 1;
	CHECK(cuMemAlloc(&a, n * sizeof(int)));
	CUgraph g;
	CHECK(cuGraphCreate(&g, 0));
	du_args32_t ua;
	memset(&ua, 0, sizeof(ua));
	void *uargs[] = { &ua };
	CUDA_KERNEL_NODE_PARAMS pu = kp(upd, uargs);
	CUgraphNode nu, nfill, nadd;
	CHECK(cuGraphAddKernelNode(&nu, g, NULL, 0, &pu));
	void *fargs[] = { &a, &v, &n };
	CUDA_KERNEL_NODE_PARAMS pf = kp(t_func("fill"), fargs);
	CHECK(cuGraphAddKernelNode(&nfill, g, &nu, 1, &pf));
	void *aargs[] = { &a, &inc, &n };
	CUDA_KERNEL_NODE_PARAMS pa = kp(t_func("add_scalar"), aargs);
	CHECK(cuGraphAddKernelNode(&nadd, g, &nfill, 1, &pa));
	CUgraphDeviceNode dfill = devupd(nfill), dadd = devupd(nadd);
	CUkernelNodeAttrValue off0;
	memset(&off0, 0, sizeof(off0));
	EXPECT_ERR(cuGraphKernelNodeSetAttribute(nfill, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE,
						 &off0), CUDA_ERROR_INVALID_VALUE); /* no opting out */
	CUgraphExec x, x2;
	CHECK(cuGraphInstantiate(&x, g, 0));
	EXPECT_ERR(cuGraphInstantiate(&x2, g, 0), CUDA_ERROR_INVALID_VALUE); /* once only */
	CHECK(cuGraphNodeSetEnabled(x, nu, 0));
	CHECK(cuGraphUpload(x, s));
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(a, 0) == 4 && t_read_int(a, 7) == 4);

	/* fill's value (parameter 1, at 8) to 10, add_scalar's to 5: this launch. */
	ua.n = 2;
	ua.e[0] = (du_entry_t){ (uint64_t)(uintptr_t)dfill, 8, 4, 10 };
	ua.e[1] = (du_entry_t){ (uint64_t)(uintptr_t)dadd, 8, 4, 5 };
	CHECK(cuGraphExecKernelNodeSetParams(x, nu, &pu));
	CHECK(cuGraphNodeSetEnabled(x, nu, 1));
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(a, 0) == 15 && t_read_int(a, 7) == 15);
	/* They last: the updater disabled, the next launch runs them again. */
	CHECK(cuGraphNodeSetEnabled(x, nu, 0));
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(a, 3) == 15);
	/* The host sets add_scalar's again: from the next launch its own, while
	 * fill keeps its device update; a grid update runs. */
	inc = 100;
	CHECK(cuGraphExecKernelNodeSetParams(x, nadd, &pa));
	ua.n = 1;
	ua.e[0] = (du_entry_t){ (uint64_t)(uintptr_t)dfill, 1, 0, 1 | (1ull << 32) };
	CHECK(cuGraphExecKernelNodeSetParams(x, nu, &pu));
	CHECK(cuGraphNodeSetEnabled(x, nu, 1));
	CHECK(cuGraphUpload(x, s));
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(a, 0) == 110 && t_read_int(a, 7) == 110);
	/* A disabled kernel node runs nothing. */
	CHECK(cuGraphNodeSetEnabled(x, nu, 0));
	CHECK(cuGraphNodeSetEnabled(x, nadd, 0));
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(a, 0) == 10);
	CUgraphExecUpdateResultInfo info;
	EXPECT(cuGraphExecUpdate(x, g, &info) != CUDA_SUCCESS);
	CHECK(cuGraphExecDestroy(x));
	CHECK(cuGraphDestroy(g));
	CHECK(cuMemFree(a));
	CHECK(cuModuleUnload(m));
}

int main(void)
{
	CUgraph g;
	CUgraphExec x;
	CUgraphNode nfill, nadd, nset, ncpy, nhost, nempty;
	CUstream s;
	CUdeviceptr a, b;
	unsigned n = 16;
	int v = 3, inc = 1;
	t_setup();
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&a, n * sizeof(int)));
	CHECK(cuMemAlloc(&b, n * sizeof(int)));
	CHECK(cuGraphCreate(&g, 0));

	void *fargs[] = { &a, &v, &n };
	CUDA_KERNEL_NODE_PARAMS p1 = kp(t_func("fill"), fargs);
	CHECK(cuGraphAddKernelNode(&nfill, g, NULL, 0, &p1));
	v = 999; /* arguments were copied at call time */
	void *aargs[] = { &a, &inc, &n };
	CUDA_KERNEL_NODE_PARAMS p2 = kp(t_func("add_scalar"), aargs);
	CHECK(cuGraphAddKernelNode(&nadd, g, &nfill, 1, &p2));
	CUDA_MEMSET_NODE_PARAMS ms = { .dst = b, .pitch = 0, .value = 0x01010101u,
				       .elementSize = 4, .width = n, .height = 1 };
	CHECK(cuGraphAddMemsetNode(&nset, g, NULL, 0, &ms, NULL));
	CUDA_MEMCPY3D cp;
	memset(&cp, 0, sizeof(cp));
	cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	cp.srcDevice = a;
	cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	cp.dstDevice = b;
	cp.WidthInBytes = 8 * sizeof(int);
	cp.Height = cp.Depth = 1;
	CUgraphNode deps[2] = { nadd, nset };
	CHECK(cuGraphAddMemcpyNode(&ncpy, g, deps, 2, &cp, NULL));
	CUDA_HOST_NODE_PARAMS hp = { host_node, NULL };
	CHECK(cuGraphAddHostNode(&nhost, g, NULL, 0, &hp));
	CHECK(cuGraphAddEmptyNode(&nempty, g, NULL, 0));
	CHECK(cuGraphAddDependencies(g, &ncpy, &nhost, NULL, 1));
	CHECK(cuGraphAddDependencies(g, &nhost, &nempty, NULL, 1));
	size_t nn = 0;
	CHECK(cuGraphGetNodes(g, NULL, &nn));
	EXPECT(nn == 6);
	CUgraphNodeType ty;
	CHECK(cuGraphNodeGetType(ncpy, &ty));
	EXPECT(ty == CU_GRAPH_NODE_TYPE_MEMCPY);

	CHECK(cuGraphInstantiate(&x, g, 0));
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(b, 0) == 4 && t_read_int(b, 7) == 4 && t_read_int(b, 8) == 0x01010101);
	EXPECT(atomic_load(&host_calls) == 1);

	/* Patch while a launch is held back: only the later launch sees it. */
	static t_gate_t gate = T_GATE_INIT;
	CHECK(cuLaunchHostFunc(s, t_gate_fn, &gate));
	CHECK(cuGraphLaunch(x, s));
	int inc2 = 100;
	void *aargs2[] = { &a, &inc2, &n };
	CUDA_KERNEL_NODE_PARAMS p3 = kp(t_func("add_scalar"), aargs2);
	CHECK(cuGraphExecKernelNodeSetParams(x, nadd, &p3));
	CHECK(cuGraphLaunch(x, s));
	CUdeviceptr hb;
	int *hbuf;
	CHECK(cuMemAllocHost((void **)&hbuf, 8 * sizeof(int)));
	hb = (CUdeviceptr)(uintptr_t)hbuf;
	(void)hb;
	CHECK(cuMemcpyDtoHAsync(hbuf, b, 8 * sizeof(int), s));
	/* Destroying the exec with launches in flight is safe. */
	CHECK(cuGraphExecDestroy(x));
	t_gate_open(&gate);
	CHECK(cuStreamSynchronize(s));
	EXPECT(hbuf[0] == 3 + 100);
	EXPECT(atomic_load(&host_calls) == 3);

	/* Update from a same-topology graph takes all its parameters. */
	CHECK(cuGraphInstantiateWithFlags(&x, g, 0));
	CUgraph g2;
	CUgraphNode m1, m2, m3, m4, m5, m6;
	int v2 = 50;
	void *fargs2[] = { &a, &v2, &n };
	CUDA_KERNEL_NODE_PARAMS q1 = kp(t_func("fill"), fargs2);
	CHECK(cuGraphCreate(&g2, 0));
	CHECK(cuGraphAddKernelNode(&m1, g2, NULL, 0, &q1));
	CHECK(cuGraphAddKernelNode(&m2, g2, &m1, 1, &p2));
	CHECK(cuGraphAddMemsetNode(&m3, g2, NULL, 0, &ms, NULL));
	CUgraphNode deps2[2] = { m2, m3 };
	CHECK(cuGraphAddMemcpyNode(&m4, g2, deps2, 2, &cp, NULL));
	CHECK(cuGraphAddHostNode(&m5, g2, NULL, 0, &hp));
	CHECK(cuGraphAddEmptyNode(&m6, g2, NULL, 0));
	CHECK(cuGraphAddDependencies(g2, &m4, &m5, NULL, 1));
	CUgraphExecUpdateResultInfo info;
	/* Topology differs until the last edge exists. */
	EXPECT_ERR(cuGraphExecUpdate(x, g2, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
	CHECK(cuGraphAddDependencies(g2, &m5, &m6, NULL, 1));
	CHECK(cuGraphExecUpdate(x, g2, &info));
	EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(b, 0) == 51);

	/* Memset/memcpy node patches. */
	CUDA_MEMSET_NODE_PARAMS ms2 = ms;
	ms2.value = 7;
	CHECK(cuGraphExecMemsetNodeSetParams(x, nset, &ms2, NULL));
	CUDA_MEMCPY3D cp2 = cp;
	cp2.WidthInBytes = 4 * sizeof(int);
	CHECK(cuGraphExecMemcpyNodeSetParams(x, ncpy, &cp2, NULL));
	CHECK(cuGraphLaunch(x, s));
	CHECK(cuStreamSynchronize(s));
	EXPECT(t_read_int(b, 3) == 51 && t_read_int(b, 4) == 7);

	/* Errors: a wrong node type, a bad handle, a cycle. */
	EXPECT_ERR(cuGraphExecKernelNodeSetParams(x, nset, &p3), CUDA_ERROR_INVALID_VALUE);
	EXPECT_ERR(cuGraphLaunch((CUgraphExec)&n, s), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuGraphAddDependencies(g2, &m6, &m1, NULL, 1));
	CUgraphExec xc;
	EXPECT_ERR(cuGraphInstantiate(&xc, g2, 0), CUDA_ERROR_INVALID_VALUE);

	CUDA_GRAPH_INSTANTIATE_PARAMS ip = { 0 };
	CUgraphExec x2;
	CHECK(cuGraphInstantiateWithParams(&x2, g, &ip));
	EXPECT(ip.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS);
	CHECK(cuGraphExecDestroy(x2));
	CHECK(cuGraphExecDestroy(x));
	CHECK(cuGraphDestroy(g));
	CHECK(cuGraphDestroy(g2));
	CHECK(cuMemFreeHost(hbuf));
	device_updates(s);
	return 0;
}
