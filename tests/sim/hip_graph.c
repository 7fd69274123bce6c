/*
 * HIP front: graphs, node construction (kernel nodes take the module
 * function handle or a registered host stub in hipKernelNodeParams.func), instantiation (the 5.2
 * five-argument hipGraphInstantiate and WithFlags), launch, and parameter
 * patching of executable graphs.  GS_SIM_FAIL_* fault injection for graph
 * build, instantiate, launch and kernel-node patch is applied here, as in
 * the CUDA front.
 */
#include <stdlib.h>
#include <string.h>

#include "hip_front.h"

static hipError_t check_graph(hipGraph_t g)
{
	return gs_sim_reg_is(g, GS_SIM_H_GRAPH) ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipGraphCreate(hipGraph_t *pGraph, unsigned int flags)
{
	gs_sim_graph_t *g;
	if (!pGraph || flags)
		GS_HIP_RET(hipErrorInvalidValue);
	hipError_t r = gs_hip_err(gs_sim_graph_create(&g));
	if (!r)
		*pGraph = (hipGraph_t)g;
	GS_HIP_RET(r);
}

hipError_t hipGraphDestroy(hipGraph_t graph)
{
	if (check_graph(graph))
		GS_HIP_RET(hipErrorInvalidValue);
	gs_sim_graph_destroy((gs_sim_graph_t *)graph);
	return hipSuccess;
}

/* Common tail of the hipGraphAdd*Node calls: takes ownership of *w. */
static hipError_t add_node(hipGraphNode_t *out, hipGraph_t g, const hipGraphNode_t *deps,
			   size_t nd, gs_sim_work_t *w)
{
	gs_sim_node_t *node;
	hipError_t r = gs_hip_err(gs_sim_front_add_node(&node, (gs_sim_graph_t *)g, w,
						      (void *const *)deps, nd));
	if (!r)
		*out = (hipGraphNode_t)node;
	return r;
}

static hipError_t add_prologue(hipGraphNode_t *out, hipGraph_t g, const hipGraphNode_t *deps,
			       size_t nd)
{
	if (check_graph(g) || !out || (nd && !deps))
		return hipErrorInvalidValue;
	return hipSuccess;
}

static hipError_t kernel_params_work(gs_sim_work_t *w, const hipKernelNodeParams *p)
{
	if (!p)
		return hipErrorInvalidValue;
	const unsigned grid[3] = { p->gridDim.x, p->gridDim.y, p->gridDim.z };
	const unsigned block[3] = { p->blockDim.x, p->blockDim.y, p->blockDim.z };
	/* func is a module function or, as HIP's own graphs have it, a host stub. */
	gs_sim_func_t *fn = gs_hip_func(p->func);
	if (!fn)
		fn = gs_hip_stub_func(p->func);
	hipError_t r = gs_hip_kernel_work(w, fn, grid, block, p->sharedMemBytes, p->kernelParams,
					  p->extra);
	return r == hipErrorInvalidResourceHandle ? hipErrorInvalidDeviceFunction : r;
}

hipError_t hipGraphAddKernelNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				 const hipGraphNode_t *pDependencies, size_t numDependencies,
				 const hipKernelNodeParams *pNodeParams)
{
	gs_sim_work_t w;
	hipError_t r = add_prologue(pGraphNode, graph, pDependencies, numDependencies);
	if (r || (r = kernel_params_work(&w, pNodeParams)))
		GS_HIP_RET(r);
	GS_HIP_RET(add_node(pGraphNode, graph, pDependencies, numDependencies, &w));
}

hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				   const hipGraphNode_t *pDependencies, size_t numDependencies,
				   void *dst, const void *src, size_t count, hipMemcpyKind kind)
{
	gs_sim_work_t w;
	hipError_t r = add_prologue(pGraphNode, graph, pDependencies, numDependencies);
	if (r)
		GS_HIP_RET(r);
	if (!count)
		GS_HIP_RET(hipErrorInvalidValue);
	if ((r = gs_hip_copy_work(&w, dst, src, count, kind)))
		GS_HIP_RET(r);
	GS_HIP_RET(add_node(pGraphNode, graph, pDependencies, numDependencies, &w));
}

static hipError_t memset_params_work(gs_sim_work_t *w, const hipMemsetParams *p)
{
	if (!p || !p->width || !p->height)
		return hipErrorInvalidValue;
	return gs_hip_memset_work(w, p->dst, p->pitch, p->value, p->elementSize, p->width,
				  p->height);
}

hipError_t hipGraphAddMemsetNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				 const hipGraphNode_t *pDependencies, size_t numDependencies,
				 const hipMemsetParams *pMemsetParams)
{
	gs_sim_work_t w;
	hipError_t r = add_prologue(pGraphNode, graph, pDependencies, numDependencies);
	if (r || (r = memset_params_work(&w, pMemsetParams)))
		GS_HIP_RET(r);
	GS_HIP_RET(add_node(pGraphNode, graph, pDependencies, numDependencies, &w));
}

hipError_t hipGraphAddEmptyNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
				const hipGraphNode_t *pDependencies, size_t numDependencies)
{
	hipError_t r = add_prologue(pGraphNode, graph, pDependencies, numDependencies);
	if (r)
		GS_HIP_RET(r);
	gs_sim_work_t w = { .kind = GS_SIM_W_EMPTY };
	GS_HIP_RET(add_node(pGraphNode, graph, pDependencies, numDependencies, &w));
}

hipError_t hipGraphAddHostNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
			       const hipGraphNode_t *pDependencies, size_t numDependencies,
			       const hipHostNodeParams *pNodeParams)
{
	hipError_t r = add_prologue(pGraphNode, graph, pDependencies, numDependencies);
	if (r)
		GS_HIP_RET(r);
	if (!pNodeParams || !pNodeParams->fn)
		GS_HIP_RET(hipErrorInvalidValue);
	gs_sim_work_t w = { .kind = GS_SIM_W_HOST,
			    .u.host = { pNodeParams->fn, pNodeParams->userData } };
	GS_HIP_RET(add_node(pGraphNode, graph, pDependencies, numDependencies, &w));
}

hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t *nodes, size_t *numNodes)
{
	if (check_graph(graph) || !numNodes)
		GS_HIP_RET(hipErrorInvalidValue);
	gs_sim_front_graph_nodes((gs_sim_graph_t *)graph, (void **)nodes, numNodes);
	return hipSuccess;
}

/* ---- instantiate, launch ---- */
static hipError_t instantiate(hipGraphExec_t *px, hipGraph_t g)
{
	gs_sim_exec_t *x;
	if (check_graph(g) || !px)
		return hipErrorInvalidValue;
	if (gs_sim_fault(GS_SIM_F_INSTANTIATE))
		return hipErrorOutOfMemory;
	if (gs_sim_refused_at_instantiate((gs_sim_graph_t *)g))
		return hipErrorInvalidValue; /* GS_SIM_REFUSE_AT=instantiate */
	hipError_t r = gs_hip_err(gs_sim_exec_create(&x, (gs_sim_graph_t *)g));
	if (!r)
		*px = (hipGraphExec_t)x;
	return r;
}

hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
			       hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize)
{
	if (pErrorNode)
		*pErrorNode = NULL;
	if (pLogBuffer && bufferSize)
		pLogBuffer[0] = '\0';
	GS_HIP_RET(instantiate(pGraphExec, graph));
}

hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec, hipGraph_t graph,
					unsigned long long flags)
{
	GS_HIP_RET(instantiate(pGraphExec, graph));
}

hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec)
{
	if (!gs_sim_reg_is(graphExec, GS_SIM_H_EXEC))
		GS_HIP_RET(hipErrorInvalidValue);
	gs_sim_exec_destroy((gs_sim_exec_t *)graphExec);
	return hipSuccess;
}

/* The host pays one launch; the worker pays GS_SIM_NODE_US per node. */
static hipError_t graph_launch(hipGraphExec_t hx, hipStream_t h, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	if (!gs_sim_reg_is(hx, GS_SIM_H_EXEC))
		return hipErrorInvalidValue;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		return r;
	return gs_hip_err(gs_sim_front_graph_launch((gs_sim_exec_t *)hx, s));
}

hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream)
{
	GS_HIP_RET(graph_launch(graphExec, stream, GS_HIP_NULL));
}

/* ---- executable graph patching ---- */
static hipError_t exec_set(hipGraphExec_t hx, hipGraphNode_t node, gs_sim_work_t *w)
{
	return gs_hip_err(gs_sim_exec_set((gs_sim_exec_t *)hx, (gs_sim_node_t *)node, w->kind, w));
}

hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
					   const hipKernelNodeParams *pNodeParams)
{
	gs_sim_work_t w;
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !node)
		GS_HIP_RET(hipErrorInvalidValue);
	if (gs_sim_fault(GS_SIM_F_NODE_PATCH))
		GS_HIP_RET(hipErrorInvalidValue);
	hipError_t r = kernel_params_work(&w, pNodeParams);
	GS_HIP_RET(r ? r : exec_set(hGraphExec, node, &w));
}

hipError_t hipGraphExecMemcpyNodeSetParams1D(hipGraphExec_t hGraphExec, hipGraphNode_t node,
					     void *dst, const void *src, size_t count,
					     hipMemcpyKind kind)
{
	gs_sim_work_t w;
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !node || !count)
		GS_HIP_RET(hipErrorInvalidValue);
	hipError_t r = gs_hip_copy_work(&w, dst, src, count, kind);
	GS_HIP_RET(r ? r : exec_set(hGraphExec, node, &w));
}

hipError_t hipGraphExecMemsetNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
					   const hipMemsetParams *pNodeParams)
{
	gs_sim_work_t w;
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !node)
		GS_HIP_RET(hipErrorInvalidValue);
	hipError_t r = memset_params_work(&w, pNodeParams);
	GS_HIP_RET(r ? r : exec_set(hGraphExec, node, &w));
}

hipError_t hipGraphExecHostNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
					 const hipHostNodeParams *pNodeParams)
{
	if (!gs_sim_reg_is(hGraphExec, GS_SIM_H_EXEC) || !node || !pNodeParams || !pNodeParams->fn)
		GS_HIP_RET(hipErrorInvalidValue);
	gs_sim_work_t w = { .kind = GS_SIM_W_HOST,
			    .u.host = { pNodeParams->fn, pNodeParams->userData } };
	GS_HIP_RET(exec_set(hGraphExec, node, &w));
}
