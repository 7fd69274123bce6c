/*
 * CUDA front: graphs, node construction, instantiation, launch, parameter
 * patching of executable graphs and whole-graph update.  GS_SIM_FAIL_*
 * fault injection for graph build, instantiate, launch and node patch is
 * applied here.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_front.h"

static CUresult check_graph(CUgraph g)
{
	GS_CU_CHECK_INIT();
	return gs_sim_reg_is(g, GS_SIM_H_GRAPH) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	gs_sim_graph_t *g;
	GS_CU_CHECK_INIT();
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	/* A builder slow to start its graph: the program goes on meanwhile
	 * (frees a workspace whose copy or memset the graph will hold). */
	double us = gs_sim_graph_create_us();
	if (us > 0)
		usleep((useconds_t)us);
	CUresult r = gs_cu_err(gs_sim_graph_create(&g));
	if (!r)
		*phGraph = (CUgraph)g;
	return r;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
	CUresult r = check_graph(hGraph);
	if (r)
		return r;
	gs_sim_graph_destroy((gs_sim_graph_t *)hGraph);
	return CUDA_SUCCESS;
}

/* Common tail of the cuGraphAdd*Node calls: takes ownership of *w. */
static CUresult add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
			 gs_sim_work_t *w)
{
	gs_sim_node_t *node;
	CUresult r = gs_cu_err(gs_sim_front_add_node(&node, (gs_sim_graph_t *)g, w,
						     (void *const *)deps, nd));
	if (!r)
		*out = (CUgraphNode)node;
	return r;
}

static CUresult add_prologue(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd)
{
	CUresult r = check_graph(g);
	if (r)
		return r;
	if (!out || (nd && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult kernel_params_work(gs_sim_work_t *w, const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_func_t *fn = p->func ? gs_cu_func(p->func) : gs_cu_func((CUfunction)p->kern);
	const unsigned grid[3] = { p->gridDimX, p->gridDimY, p->gridDimZ };
	const unsigned block[3] = { p->blockDimX, p->blockDimY, p->blockDimZ };
	CUresult r = gs_cu_kernel_work(w, fn, grid, block, p->sharedMemBytes, p->kernelParams, p->extra);
	return r == CUDA_ERROR_INVALID_HANDLE ? CUDA_ERROR_INVALID_VALUE : r;
}

static void params_v1_to_v2(CUDA_KERNEL_NODE_PARAMS *p2, const CUDA_KERNEL_NODE_PARAMS_v1 *p1)
{
	memset(p2, 0, sizeof(*p2));
	p2->func = p1->func;
	p2->gridDimX = p1->gridDimX;
	p2->gridDimY = p1->gridDimY;
	p2->gridDimZ = p1->gridDimZ;
	p2->blockDimX = p1->blockDimX;
	p2->blockDimY = p1->blockDimY;
	p2->blockDimZ = p1->blockDimZ;
	p2->sharedMemBytes = p1->sharedMemBytes;
	p2->kernelParams = p1->kernelParams;
	p2->extra = p1->extra;
}

CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			      size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	gs_sim_work_t w;
	CUresult r = add_prologue(phGraphNode, hGraph, dependencies, numDependencies);
	if (r || (r = kernel_params_work(&w, nodeParams)))
		return r;
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphAddKernelNode_v1(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS p2;
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	params_v1_to_v2(&p2, nodeParams);
	return cuGraphAddKernelNode(phGraphNode, hGraph, dependencies, numDependencies, &p2);
}

CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			      size_t numDependencies, const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
	gs_sim_work_t w;
	CUresult r = add_prologue(phGraphNode, hGraph, dependencies, numDependencies);
	if (r || (r = gs_cu_copy3d(&w, copyParams)))
		return r;
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			      size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	gs_sim_work_t w;
	CUresult r = add_prologue(phGraphNode, hGraph, dependencies, numDependencies);
	if (r)
		return r;
	if (!p || !p->width || !p->height)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = gs_cu_memset_work(&w, p->dst, p->pitch, p->value, p->elementSize, p->width, p->height)))
		return r;
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			     size_t numDependencies)
{
	CUresult r = add_prologue(phGraphNode, hGraph, dependencies, numDependencies);
	if (r)
		return r;
	gs_sim_work_t w = { .kind = GS_SIM_W_EMPTY };
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			    size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams)
{
	CUresult r = add_prologue(phGraphNode, hGraph, dependencies, numDependencies);
	if (r)
		return r;
	if (!nodeParams || !nodeParams->fn)
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_work_t w = { .kind = GS_SIM_W_HOST, .u.host = { nodeParams->fn, nodeParams->userData } };
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
				const CUgraphEdgeData *edgeData, size_t numDependencies)
{
	CUresult r = check_graph(hGraph);
	if (r)
		return r;
	if (numDependencies && (!from || !to))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < numDependencies; i++) {
		if (!gs_sim_reg_is(from[i], GS_SIM_H_NODE) || !gs_sim_reg_is(to[i], GS_SIM_H_NODE))
			return CUDA_ERROR_INVALID_VALUE;
		gs_sim_node_t *a = (gs_sim_node_t *)from[i], *b = (gs_sim_node_t *)to[i];
		/*
		 * A programmatic edge (kernel to kernel, from the programmatic or
		 * launch-order port) lets the second start early on a GPU; here
		 * it waits for the first to complete, which is always allowed.
		 */
		bool prog = edgeData && edgeData[i].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC &&
			    (edgeData[i].from_port == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC ||
			     edgeData[i].from_port == CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER) &&
			    !edgeData[i].to_port && a->work.kind == GS_SIM_W_KERNEL &&
			    b->work.kind == GS_SIM_W_KERNEL;
		if (edgeData && !prog && (edgeData[i].type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT ||
					  edgeData[i].from_port || edgeData[i].to_port))
			return CUDA_ERROR_INVALID_VALUE;
		if (a->graph != (gs_sim_graph_t *)hGraph)
			return CUDA_ERROR_INVALID_VALUE;
		if ((r = gs_cu_err(gs_sim_graph_add_dep(a, b))))
			return r;
	}
	return CUDA_SUCCESS;
}

/* hNode as a kernel node, or NULL. */
static gs_sim_node_t *kernel_node(CUgraphNode hNode)
{
	gs_sim_node_t *n = (gs_sim_node_t *)hNode;
	return gs_sim_reg_is(hNode, GS_SIM_H_NODE) && n->work.kind == GS_SIM_W_KERNEL ? n : NULL;
}

CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
				       const CUkernelNodeAttrValue *value)
{
	GS_CU_CHECK_INIT();
	gs_sim_node_t *n = kernel_node(hNode);
	if (!n || !value)
		return CUDA_ERROR_INVALID_VALUE;
	if (attr == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && value->cooperative &&
	    gs_sim_refuses_node(GS_SIM_W_COOP))
		return CUDA_ERROR_INVALID_VALUE;
	GS_SIM_PT(pthread_mutex_lock(&n->graph->mu));
	CUresult r = gs_cu_kernel_attr(&n->work.u.kern.dim, attr, value, false);
	if (!r && attr == CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE) {
		int on = value->deviceUpdatableKernelNode.deviceUpdatable;
		r = on != 0 && on != 1 ? CUDA_ERROR_INVALID_VALUE : gs_cu_err(gs_sim_node_devupd(n, on));
	}
	GS_SIM_PT(pthread_mutex_unlock(&n->graph->mu));
	return r;
}

/* What the simulator keeps of a node's attributes: clusters, the priority,
 * cooperative, and whether it is device-updatable (with its device handle). */
CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
				       CUkernelNodeAttrValue *value)
{
	GS_CU_CHECK_INIT();
	gs_sim_node_t *n = kernel_node(hNode);
	if (!n || !value)
		return CUDA_ERROR_INVALID_VALUE;
	memset(value, 0, sizeof(*value));
	GS_SIM_PT(pthread_mutex_lock(&n->graph->mu));
	const gs_sim_dim_t *d = &n->work.u.kern.dim;
	CUresult r = CUDA_SUCCESS;
	switch (attr) {
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
		value->clusterDim.x = d->cluster[0];
		value->clusterDim.y = d->cluster[1];
		value->clusterDim.z = d->cluster[2];
		break;
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		value->priority = d->priority;
		break;
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
		value->cooperative = d->cooperative;
		break;
	case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
		value->deviceUpdatableKernelNode.deviceUpdatable = n->devnode != NULL;
		value->deviceUpdatableKernelNode.devNode = (CUgraphDeviceNode)n->devnode;
		break;
	default:
		break; /* not modelled: zero */
	}
	GS_SIM_PT(pthread_mutex_unlock(&n->graph->mu));
	return r;
}

CUresult cuGraphAddDependencies_v1(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
				   size_t numDependencies)
{
	return cuGraphAddDependencies(hGraph, from, to, NULL, numDependencies);
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	CUresult r = check_graph(hGraph);
	if (r)
		return r;
	if (!numNodes)
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_front_graph_nodes((gs_sim_graph_t *)hGraph, (void **)nodes, numNodes);
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	GS_CU_CHECK_INIT();
	if (!type || !gs_sim_reg_is(hNode, GS_SIM_H_NODE))
		return CUDA_ERROR_INVALID_VALUE;
	switch (((gs_sim_node_t *)hNode)->type) {
	case GS_SIM_W_KERNEL: *type = CU_GRAPH_NODE_TYPE_KERNEL; break;
	case GS_SIM_W_COPY: *type = CU_GRAPH_NODE_TYPE_MEMCPY; break;
	case GS_SIM_W_SET: *type = CU_GRAPH_NODE_TYPE_MEMSET; break;
	case GS_SIM_W_HOST: *type = CU_GRAPH_NODE_TYPE_HOST; break;
	case GS_SIM_W_GRAPH: *type = CU_GRAPH_NODE_TYPE_GRAPH; break;
	case GS_SIM_W_RECORD: *type = CU_GRAPH_NODE_TYPE_EVENT_RECORD; break;
	default: *type = CU_GRAPH_NODE_TYPE_EMPTY; break;
	}
	return CUDA_SUCCESS;
}

/* ---- instantiate, launch ---- */
static CUresult instantiate(CUgraphExec *px, CUgraph g, CUgraphInstantiateResult *res,
			   CUgraphNode *err_node)
{
	gs_sim_exec_t *x;
	CUresult r = check_graph(g);
	if (res)
		*res = CUDA_GRAPH_INSTANTIATE_ERROR;
	if (r)
		return r;
	if (!px)
		return CUDA_ERROR_INVALID_VALUE;
	if (gs_sim_fault(GS_SIM_F_INSTANTIATE))
		return CUDA_ERROR_OUT_OF_MEMORY;
	gs_sim_node_t *bad = gs_sim_refused_at_instantiate((gs_sim_graph_t *)g);
	if (bad) { /* a node this "driver" cannot run in a graph (GS_SIM_REFUSE_AT) */
		if (res)
			*res = CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED;
		if (err_node)
			*err_node = (CUgraphNode)bad;
		return CUDA_ERROR_INVALID_VALUE;
	}
	r = gs_cu_err(gs_sim_exec_create(&x, (gs_sim_graph_t *)g));
	if (r)
		return r;
	*px = (CUgraphExec)x;
	if (res)
		*res = CUDA_GRAPH_INSTANTIATE_SUCCESS;
	return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
	return instantiate(phGraphExec, hGraph, NULL, NULL);
}

static CUresult instantiate_params(CUgraphExec *px, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	p->hErrNode_out = NULL;
	return instantiate(px, g, &p->result_out, &p->hErrNode_out);
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
				      CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
					   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC))
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_exec_destroy((gs_sim_exec_t *)hGraphExec);
	return CUDA_SUCCESS;
}

/* The host pays one launch; the worker pays GS_SIM_NODE_US per node. */
static CUresult graph_launch(CUgraphExec hx, CUstream h, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hx, GS_SIM_H_EXEC))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	return gs_cu_err(gs_sim_front_graph_launch((gs_sim_exec_t *)hx, s));
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream, GS_CU_LEGACY);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream, GS_CU_PTDS);
}

static CUresult graph_upload(CUgraphExec hx, CUstream h, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hx, GS_SIM_H_EXEC))
		return CUDA_ERROR_INVALID_VALUE;
	return gs_cu_stream(h, d, &s);
}

CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_upload(hGraphExec, hStream, GS_CU_LEGACY);
}

CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_upload(hGraphExec, hStream, GS_CU_PTDS);
}

/* ---- executable graph patching ---- */
static CUresult exec_set(CUgraphExec hx, CUgraphNode node, gs_sim_work_t *w)
{
	CUresult r = gs_cu_err(gs_sim_exec_set((gs_sim_exec_t *)hx, (gs_sim_node_t *)node, w->kind, w));
	return r;
}

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
					const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	gs_sim_work_t w;
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !hNode)
		return CUDA_ERROR_INVALID_VALUE;
	if (gs_sim_fault(GS_SIM_F_NODE_PATCH))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = kernel_params_work(&w, nodeParams);
	return r ? r : exec_set(hGraphExec, hNode, &w);
}

CUresult cuGraphExecKernelNodeSetParams_v1(CUgraphExec hGraphExec, CUgraphNode hNode,
					   const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS p2;
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	params_v1_to_v2(&p2, nodeParams);
	return cuGraphExecKernelNodeSetParams(hGraphExec, hNode, &p2);
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
					const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
	gs_sim_work_t w;
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !hNode)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = gs_cu_copy3d(&w, copyParams);
	return r ? r : exec_set(hGraphExec, hNode, &w);
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
					const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	gs_sim_work_t w;
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !hNode || !p || !p->width || !p->height)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = gs_cu_memset_work(&w, p->dst, p->pitch, p->value, p->elementSize, p->width, p->height);
	return r ? r : exec_set(hGraphExec, hNode, &w);
}

CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
				      const CUDA_HOST_NODE_PARAMS *p)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !hNode || !p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_work_t w = { .kind = GS_SIM_W_HOST, .u.host = { p->fn, p->userData } };
	return exec_set(hGraphExec, hNode, &w);
}

CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
{
	gs_sim_node_t *bad;
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !gs_sim_reg_is(hGraph, GS_SIM_H_GRAPH))
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_err_t e = gs_sim_exec_update((gs_sim_exec_t *)hGraphExec, (gs_sim_graph_t *)hGraph, &bad);
	if (resultInfo) {
		resultInfo->result = e == GS_SIM_OK ? CU_GRAPH_EXEC_UPDATE_SUCCESS
				   : e == GS_SIM_EUPDATE ? CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
				   : CU_GRAPH_EXEC_UPDATE_ERROR;
		resultInfo->errorNode = (CUgraphNode)bad;
		resultInfo->errorFromNode = NULL;
	}
	return gs_cu_err(e);
}

CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !gs_sim_reg_is(hNode, GS_SIM_H_NODE))
		return CUDA_ERROR_INVALID_VALUE;
	return gs_cu_err(gs_sim_exec_enable((gs_sim_exec_t *)hGraphExec, (gs_sim_node_t *)hNode,
					    isEnabled != 0));
}
