#!/usr/bin/env python3
"""Graph neural networks with PyTorch Geometric, for the real-program suite.

What a PyG user writes for full-batch node classification (PyG's
examples/gcn.py, gat.py and the full-batch GraphSAGE of graph_sage.py /
reddit.py): the graph as a torch_geometric.data.Data (x, edge_index, y and
train/val/test masks), moved to the GPU once with data.to(device), a model
of --layers (2) torch_geometric.nn convolutions, and the examples' loops:

    def train():                              # --task train: one step
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        return loss.item()

    @torch.no_grad()
    def test():                               # --task infer: one step
        model.eval()
        pred = model(data.x, data.edge_index).argmax(dim=-1)
        mask = data.test_mask
        return int((pred[mask] == data.y[mask]).sum()) / int(mask.sum())

with torch.optim.Adam (gcn.py's weight decay 5e-4 on the first layer only).

  --model gcn   GCNConv(cached=True, normalize=True) x --layers (gcn.py):
                dropout 0.5 before each layer, ReLU between; the symmetric
                normalisation with self-loops (gcn_norm) is computed by the
                first forward pass and cached.  --hidden 16.
  --model sage  SAGEConv (mean aggregation, root weight) x --layers, ReLU
                and dropout 0.5 between (graph_sage's SAGE).  --hidden 64.
  --model gat   GATConv(heads=--heads, dropout=0.6) then GATConv(heads=1,
                concat=False) (gat.py): dropout 0.6 on the features and on
                the attention coefficients, ELU between; every forward pass
                removes and re-adds self-loops (boolean edge masks) and takes
                a per-destination softmax of the attention logits (a scatter
                max, exp, a scatter sum).  --hidden 8 per head, --heads 8.

--task train: a step is one optimizer step, loss.item() read back (on the
CPU the loss falls from about 1.9 to 1.0 (gcn), 0.03 (sage), 1.9 (gat) in
22 steps).  --task infer: a step is one eval-mode forward pass under
torch.no_grad() (dropout off), the test accuracy's two int() read-backs.
The weights are the layers' own random initialisation (glorot) from
--seed, untrained, so inference accuracy is near chance.  Mini-batch
GraphSAGE (torch_geometric.loader.NeighborLoader) is not here: PyG 2.8
samples neighbours only through the pyg-lib or torch-sparse extension
packages, and the GPU machine has neither.

The graph, made on the CPU from --seed: a stochastic block model
(torch_geometric.utils.stochastic_blockmodel_graph, undirected) of --nodes
nodes in --classes equal blocks, about --degree neighbours inside a node's
block and --cross-degree outside it on average (defaults 2400 nodes, 6
blocks, 8 and 2: about 24,000 directed edges); the label is the block,
the --features (64) features are the block's random mean (scale 0.15) plus
unit Gaussian noise; T.RandomNodeSplit(split="random") gives Planetoid's
split (20 training nodes a class, 500 validation, 1000 test).

Path to the driver (CUDA): PyTorch's kernels through cudaLaunchKernel and
cuBLAS/cuBLASLt for the layers' linear maps (Hopper: cuLaunchKernelEx).
Message passing on an edge_index tensor is PyTorch indexing: index_select
gathers the source nodes' features per edge, and the aggregation is
torch_geometric.utils.scatter, that is Tensor.scatter_add_ (GCN's weighted
sum, SAGE's mean, GAT's softmax denominator and sum) and
scatter_reduce_(reduce="amax") (GAT's softmax maximum).  Boolean-mask
indexing (out[data.train_mask], pred[mask], GAT's self-loop removal) is a
nonzero() with a synchronising device-to-host read of the count, so a step
makes several synchronising reads before its final one (gcn-train: the
two masks of the loss; gat-infer: two self-loop removals and the two masks
of the accuracy).  A rough estimate from reading PyTorch's and PyG's
source, NOT measured: 150-250 kernels a gcn-train step (about 20 a layer
forward, twice that backward, the loss, Adam's foreach kernels), 100-150 a
gat-infer step (about 55 a layer).

Determinism, the choice made: on CUDA,
scatter_add_ and index_add_ (index_select's backward) accumulate with
atomics, so the float sums of the aggregation, and every output after
them, would differ from run to run.  Under
torch.use_deterministic_algorithms(True) PyTorch runs scatter_add_ and
index_add_ as a sorted index_put_(accumulate=True) (a radix sort of the
destinations, then an ordered sum: more kernels a step, the same bytes
every run), which is what a PyG user asking for reproducibility gets
(PyG's Aggregation modules also read the flag and prefer ordered segment
reductions where a CSR pointer exists).  That covers all three models and
both tasks with the edge_index form the examples use.  The other route,
a sparse CSR adjacency (T.ToSparseTensor) so that GCNConv aggregates
with torch.sparse.mm, fits GCN inference only: GATConv needs the edge
list, and the sparse product's backward transposes the adjacency, whose
cuSPARSE path we could not show to be deterministic.  warn_only=True
because GAT's softmax maximum is a scatter_reduce_("amax"), which PyTorch
refuses in strict mode on CUDA although a maximum is exact in any order of
its atomics; that one warning is filtered, so any other stands out.
CUBLAS_WORKSPACE_CONFIG is set before torch is imported (cuBLAS is
deterministic only with a fixed workspace).  Dropout draws from the CUDA
generator that torch.manual_seed(--seed) seeds, so training takes the
same steps in every process.

--warmup W untimed steps first (the cuBLAS handle, the caching allocator,
GCN's cached normalisation), then --steps timed ones (default 10 and 200).
--out writes, per step, train: the loss (float32 little-endian); infer:
the number of correctly classified test nodes (int32); then, train: every
parameter's final bytes (float32, model.parameters() order); infer: the last
step's logits ([nodes, classes] float32).  --time prints one gs-wl line
with the median wall time of one step, its read-backs included.
"""
import os

# cuBLAS is deterministic only with a fixed workspace configuration, which
# it reads when torch first initialises it: set it before importing torch.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_geometric.transforms as T  # noqa: E402
from torch_geometric.data import Data  # noqa: E402
from torch_geometric.nn import GATConv, GCNConv, SAGEConv  # noqa: E402
from torch_geometric.utils import stochastic_blockmodel_graph  # noqa: E402

DEFAULT_HIDDEN = {"gcn": 16, "sage": 64, "gat": 8}


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, layers, dropout):
        super().__init__()
        dims = [in_channels] + [hidden_channels] * (layers - 1) + [out_channels]
        self.convs = torch.nn.ModuleList(
            GCNConv(dims[i], dims[i + 1], cached=True, normalize=True) for i in range(layers))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = F.dropout(x, p=self.dropout, training=self.training)
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu()
        return x


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, layers, dropout):
        super().__init__()
        dims = [in_channels] + [hidden_channels] * (layers - 1) + [out_channels]
        self.convs = torch.nn.ModuleList(SAGEConv(dims[i], dims[i + 1]) for i in range(layers))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu_()
                x = F.dropout(x, p=self.dropout, training=self.training)
        return x


class GAT(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, layers, heads, dropout):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        dim = in_channels
        for _ in range(layers - 1):
            self.convs.append(GATConv(dim, hidden_channels, heads, dropout=dropout))
            dim = hidden_channels * heads
        self.convs.append(GATConv(dim, out_channels, heads=1, concat=False, dropout=dropout))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = F.dropout(x, p=self.dropout, training=self.training)
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = F.elu(x)
        return x


def make_graph(a):
    """A stochastic-block-model graph with block-dependent features, Planetoid's split."""
    block = a.nodes // a.classes
    sizes = [block] * a.classes
    p_in = min(1.0, a.degree / block)
    p_out = min(1.0, a.cross_degree / (a.nodes - block))
    probs = [[p_in if i == j else p_out for j in range(a.classes)] for i in range(a.classes)]
    edge_index = stochastic_blockmodel_graph(sizes, probs, directed=False)
    y = torch.arange(a.classes).repeat_interleave(block)
    means = 0.15 * torch.randn(a.classes, a.features)
    x = means[y] + torch.randn(block * a.classes, a.features)
    data = Data(x=x, edge_index=edge_index, y=y)
    return T.RandomNodeSplit(split="random", num_train_per_class=20, num_val=500, num_test=1000)(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    ap.add_argument("--model", choices=("gcn", "sage", "gat"), default="gcn")
    ap.add_argument("--task", choices=("train", "infer"), default="train")
    ap.add_argument("--nodes", type=int, default=2400, help="graph nodes (rounded down to whole blocks)")
    ap.add_argument("--classes", type=int, default=6, help="blocks of the graph = classes")
    ap.add_argument("--degree", type=float, default=8.0, help="mean neighbours inside a node's block")
    ap.add_argument("--cross-degree", type=float, default=2.0, help="mean neighbours outside it")
    ap.add_argument("--features", type=int, default=64, help="input features a node")
    ap.add_argument("--hidden", type=int, help="hidden width (gat: per head); gcn 16, sage 64, gat 8")
    ap.add_argument("--heads", type=int, default=8, help="gat: attention heads of the hidden layers")
    ap.add_argument("--layers", type=int, default=2, help="graph convolutions")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.hidden is None:
        a.hidden = DEFAULT_HIDDEN[a.model]
    if a.classes < 2 or a.layers < 1 or a.steps < 1 or a.warmup < 0:
        ap.error("--classes >= 2, --layers and --steps >= 1, --warmup >= 0")
    if a.nodes // a.classes * a.classes < 20 * a.classes + 1500:
        ap.error("--nodes: the split needs 20 training nodes a class and 1500 more (validation, test)")
    dev = torch.device(a.device)

    # Ordered (sort-based) sums instead of atomics: see the docstring.  The
    # flag must be on before the model is built (PyG's aggregations read it).
    torch.use_deterministic_algorithms(True, warn_only=True)
    warnings.filterwarnings("ignore", message=r"scatter_reduce_cuda does not have a deterministic")

    # The graph and the weights are drawn on the CPU; the same call seeds
    # the CUDA generator that dropout draws from.
    torch.manual_seed(a.seed)
    data = make_graph(a)
    dropout = 0.6 if a.model == "gat" else 0.5
    if a.model == "gcn":
        model = GCN(a.features, a.hidden, a.classes, a.layers, dropout)
    elif a.model == "sage":
        model = SAGE(a.features, a.hidden, a.classes, a.layers, dropout)
    else:
        model = GAT(a.features, a.hidden, a.classes, a.layers, a.heads, dropout)
    model, data = model.to(dev), data.to(dev)
    if a.model == "gcn":
        # gcn.py: weight decay on the first convolution only.
        optimizer = torch.optim.Adam([dict(params=model.convs[0].parameters(), weight_decay=5e-4),
                                      dict(params=model.convs[1:].parameters(), weight_decay=0)], lr=a.lr)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=5e-4)

    def train():
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        return loss.item()

    @torch.no_grad()
    def test():
        model.eval()
        out = model(data.x, data.edge_index)
        pred = out.argmax(dim=-1)
        mask = data.test_mask
        correct = int((pred[mask] == data.y[mask]).sum())
        return out, correct, correct / int(mask.sum())

    results, times, last = [], [], None
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        if a.task == "train":
            loss = train()
            results.append(struct.pack("<f", loss))
            last = loss
        else:
            out, correct, last = test()
            results.append(struct.pack("<i", correct))
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if a.task == "train":
        results += [p.detach().cpu().contiguous().numpy().tobytes() for p in model.parameters()]
    else:
        results.append(out.cpu().contiguous().numpy().tobytes())
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        print("gs-wl: pyg_gnn variant=%s-%s device=%s nodes=%d edges=%d features=%d hidden=%d layers=%d "
              "%s=%.4f steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  a.model, a.task, dev.type, data.num_nodes, data.num_edges, a.features, a.hidden,
                  a.layers, "loss" if a.task == "train" else "test_acc", last, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
