#!/usr/bin/env python3
"""An E(3)-equivariant network on batches of point clouds with e3nn, for the real-program suite.

What an e3nn user writes for atoms or points (e3nn's own
nn/models/v2106 points convolution and SimpleNetwork, examples/tetris_gate.py,
and the interaction block of NequIP that they led to), from e3nn's
documented modules only:

  * the graph: a naive radius graph as e3nn's SimpleNetwork builds it
    (torch.cdist over the whole batch, `r < r_max` within the same graph,
    the diagonal dropped, .nonzero()), in plain torch so it runs without
    torch_cluster; edge vectors pos[src] - pos[dst];
  * edge attributes o3.spherical_harmonics(lmax 2, normalize=True,
    normalization="component"); the edge length embedded by
    e3nn.math.soft_one_hot_linspace(basis="smooth_finite", cutoff=True);
  * node attributes: the one-hot species (F.one_hot), embedded by an
    o3.Linear into --mul x 0e;
  * --layers interaction blocks (NequIP's; e3nn's v2106 Convolution):
    o3.Linear, then o3.TensorProduct(node x edge SH -> mid, "uvu"
    instructions, shared_weights=False, internal_weights=False) whose
    per-edge weights come from an e3nn.nn.FullyConnectedNet (silu) on the
    embedded length, the messages summed into their destination atoms
    with index_add_ and divided by sqrt(num_neighbors), o3.Linear again,
    plus an o3.FullyConnectedTensorProduct self-connection with the node
    attributes; each block ends in an e3nn.nn.Gate (silu scalars, sigmoid
    gates on the 1o and 2e features);
  * the readout: an o3.Linear to one 0e per atom, summed per graph
    (index_add_ over the batch vector): an energy per graph.

  --task infer  (default) a forward pass under torch.no_grad() per step on
                a new batch (cycled from --batches seeded ones), copied to
                the device as a DataLoader's batch is (.to(device)); the
                energies read back (.tolist()).
  --task train  energy and forces as NequIP trains them: the positions
                require grad, forces = -autograd.grad(E.sum(), pos,
                create_graph=True), loss = MSE(E) + --force-weight *
                MSE(F) against random targets, loss.backward() (a double
                backward through the network), Adam, loss.item() each step.

Each batch: --graphs point clouds of --min-atoms..--max-atoms atoms of
--species kinds, uniform in a cube sized for about --neighbors atoms within
--radius of an atom in its interior (fewer near the faces): about 1,300
atoms and 9,500 edges a batch at the defaults.

On the GPU: PyTorch's kernels through cudaLaunchKernel and cuBLAS (the
tensor products' and linears' matmuls, FullyConnectedNet's), and
cudaMemcpyAsync host-to-device for the batch.  e3nn generates each tensor
product's and linear's forward as torch.fx code (einsums reordered by
opt_einsum_fx) when the module is built; with torch >= 2.10 e3nn 0.6 runs
that code eagerly (its jit_mode default is "eager"), so every einsum,
reshape, cat and multiply is a launch of its own (an older e3nn would
torch.jit.script it: the gs-wl line names e3nn's version and jit mode).  Every step synchronises
inside the forward pass too: .nonzero() of the radius graph copies its size
to the host, so the number of edges (and with it every edge kernel's grid)
changes from batch to batch.  Counted with a TorchDispatchMode on the CPU
at the defaults: about 1,480 ATen operations a forward pass, 364 of them
not views (so about that many kernels), and about 6,700 a training step,
2,900 of them not views (slice_backward's zero fills and copies, the
double backward's multiplies and matmuls, Adam's foreach kernels).

--warmup W steps first (cuBLAS initialisation, the allocator), then --steps
timed ones.  --out writes every step's energies (infer, float32 [graphs]) or
loss (train, float32), then with train every parameter's final bytes;
--time prints one gs-wl line with the median wall time of one step, the
batch's copy and the read-back included, and the mean edge count.
Determinism: weights and batches are drawn on the CPU from --seed (e3nn's
FullyConnectedNet normalises its activation with its own seeded generator);
CUBLAS_WORKSPACE_CONFIG is set before torch is imported and
torch.use_deterministic_algorithms(True): on CUDA, index_add_ then goes
through index_put_ with accumulate=True, a sort-based kernel that sums each
atom's messages in a fixed order instead of with atomics, and so do the
backward passes of the pos[src] / x[src] gathers (PyTorch's documented list
of operations it makes deterministic); the mode also fills every
torch.empty, some more kernels, which is what a user who asks for
reproducibility runs.
"""
import os

# cuBLAS is deterministic only with a fixed workspace configuration, which
# it reads when torch first initialises it: set it before importing torch.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import e3nn  # noqa: E402
from e3nn import o3  # noqa: E402
from e3nn.math import soft_one_hot_linspace  # noqa: E402
from e3nn.nn import FullyConnectedNet, Gate  # noqa: E402


def radius_graph(pos, r_max, batch):
    """e3nn's naive radius graph: every pair closer than r_max in the same graph."""
    r = torch.cdist(pos, pos)
    mask = (r < r_max) & (batch[:, None] == batch[None, :])
    # e3nn's version drops r == 0; cdist's matmul path can leave a small
    # nonzero distance from a point to itself, so drop the diagonal instead.
    mask.fill_diagonal_(False)
    edge_src, edge_dst = mask.nonzero().T
    return edge_src, edge_dst


class Interaction(nn.Module):
    """NequIP's interaction block, e3nn's points Convolution."""

    def __init__(self, irreps_in, irreps_attr, irreps_sh, irreps_out, basis, radial, num_neighbors):
        super().__init__()
        self.num_neighbors = num_neighbors
        self.lin1 = o3.Linear(irreps_in, irreps_in)
        # One "uvu" path (a weight per channel and edge) for every output
        # irrep the next layer wants, as e3nn's v2106 Convolution builds them.
        irreps_mid, instructions = [], []
        for i, (mul, ir_in) in enumerate(irreps_in):
            for j, (_, ir_edge) in enumerate(irreps_sh):
                for ir_out in ir_in * ir_edge:
                    if ir_out in irreps_out:
                        instructions.append((i, j, len(irreps_mid), "uvu", True))
                        irreps_mid.append((mul, ir_out))
        irreps_mid, p, _ = o3.Irreps(irreps_mid).sort()
        instructions = [(i1, i2, p[i_out], mode, train) for i1, i2, i_out, mode, train in instructions]
        self.tp = o3.TensorProduct(irreps_in, irreps_sh, irreps_mid, instructions,
                                   shared_weights=False, internal_weights=False)
        self.fc = FullyConnectedNet([basis, radial, self.tp.weight_numel], F.silu)
        self.lin2 = o3.Linear(irreps_mid.simplify(), irreps_out)
        self.sc = o3.FullyConnectedTensorProduct(irreps_in, irreps_attr, irreps_out)

    def forward(self, x, attr, edge_src, edge_dst, edge_sh, edge_emb):
        weight = self.fc(edge_emb)
        msgs = self.tp(self.lin1(x)[edge_src], edge_sh, weight)
        agg = msgs.new_zeros(x.shape[0], msgs.shape[1]).index_add_(0, edge_dst, msgs)
        return self.sc(x, attr) + self.lin2(agg.div(self.num_neighbors ** 0.5))


class PointsNetwork(nn.Module):
    """Species embedding, gated interaction blocks, a per-atom energy summed per graph."""

    def __init__(self, species, mul, lmax, layers, r_max, basis, radial, num_neighbors):
        super().__init__()
        self.species, self.r_max, self.basis = species, r_max, basis
        self.irreps_sh = o3.Irreps.spherical_harmonics(lmax)
        irreps_attr = o3.Irreps(f"{species}x0e")
        irreps = o3.Irreps(f"{mul}x0e")
        self.embed = o3.Linear(irreps_attr, irreps)
        self.blocks = nn.ModuleList()
        self.gates = nn.ModuleList()
        for _ in range(layers):
            gated = o3.Irreps([(mul, ir) for _, ir in self.irreps_sh if ir.l > 0])
            gate = Gate(f"{mul}x0e", [F.silu], f"{gated.num_irreps}x0e", [torch.sigmoid], gated)
            self.blocks.append(Interaction(irreps, irreps_attr, self.irreps_sh, gate.irreps_in,
                                           basis, radial, num_neighbors))
            self.gates.append(gate)
            irreps = gate.irreps_out
        self.readout = o3.Linear(irreps, "0e")

    def forward(self, pos, species, batch, num_graphs):
        with torch.no_grad():
            edge_src, edge_dst = radius_graph(pos, self.r_max, batch)
        edge_vec = pos[edge_src] - pos[edge_dst]
        edge_sh = o3.spherical_harmonics(self.irreps_sh, edge_vec, normalize=True, normalization="component")
        edge_emb = soft_one_hot_linspace(edge_vec.norm(dim=1), 0.0, self.r_max, self.basis,
                                         basis="smooth_finite", cutoff=True).mul(self.basis ** 0.5)
        attr = F.one_hot(species, self.species).to(pos.dtype)
        x = self.embed(attr)
        for block, gate in zip(self.blocks, self.gates):
            x = gate(block(x, attr, edge_src, edge_dst, edge_sh, edge_emb))
        atom_energy = self.readout(x)
        energy = atom_energy.new_zeros(num_graphs, 1).index_add_(0, batch, atom_energy)
        return energy.squeeze(-1), edge_src.numel()


def make_batch(a, gen):
    """--graphs random point clouds, batched as torch_geometric batches them."""
    pos, species, batch = [], [], []
    for g in range(a.graphs):
        n = int(torch.randint(a.min_atoms, a.max_atoms + 1, (), generator=gen))
        side = (n * 4 / 3 * math.pi * a.radius ** 3 / a.neighbors) ** (1 / 3)
        pos.append(torch.rand(n, 3, generator=gen) * side)
        species.append(torch.randint(0, a.species, (n,), generator=gen))
        batch.append(torch.full((n,), g, dtype=torch.long))
    pos, species, batch = torch.cat(pos), torch.cat(species), torch.cat(batch)
    energy = torch.randn(a.graphs, generator=gen)
    forces = torch.randn(pos.shape, generator=gen)
    return pos, species, batch, energy, forces


def tensor_bytes(t):
    """A tensor's raw bytes, C order (the host is little-endian).  Not
    bytes(storage): a storage has no buffer protocol, and bytes() then reads
    it one Python call a byte (tens of seconds for a model's parameters)."""
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, help="timed steps (infer 200, train 40)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    ap.add_argument("--task", choices=("infer", "train"), default="infer")
    ap.add_argument("--graphs", type=int, default=32, help="point clouds a batch")
    ap.add_argument("--min-atoms", type=int, default=16)
    ap.add_argument("--max-atoms", type=int, default=64)
    ap.add_argument("--species", type=int, default=4, help="atom kinds (one-hot node attributes)")
    ap.add_argument("--batches", type=int, default=4, help="distinct seeded batches cycled through")
    ap.add_argument("--layers", type=int, default=3, help="interaction blocks")
    ap.add_argument("--mul", type=int, default=16, help="channels per irrep (0e, 1o, 2e)")
    ap.add_argument("--lmax", type=int, default=2, help="spherical harmonics degree")
    ap.add_argument("--radius", type=float, default=2.5, help="the radius graph's cutoff")
    ap.add_argument("--neighbors", type=float, default=12.0, help="mean neighbours the density aims at")
    ap.add_argument("--basis", type=int, default=10, help="radial basis functions")
    ap.add_argument("--radial", type=int, default=64, help="the radial network's hidden width")
    ap.add_argument("--force-weight", type=float, default=10.0, help="train: the forces' share of the loss")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.steps is None:
        a.steps = 200 if a.task == "infer" else 40
    if not 1 <= a.min_atoms <= a.max_atoms:
        ap.error("need 1 <= --min-atoms <= --max-atoms")
    dev = torch.device(a.device)
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True)

    # Weights and batches are drawn on the CPU, so every process gets the same ones.
    torch.manual_seed(a.seed)
    model = PointsNetwork(a.species, a.mul, a.lmax, a.layers, a.radius, a.basis, a.radial, a.neighbors).to(dev)
    gen = torch.Generator().manual_seed(a.seed + 1)
    batches = [make_batch(a, gen) for _ in range(a.batches)]
    train = a.task == "train"
    if train:
        opt = torch.optim.Adam(model.parameters(), lr=a.lr)
        model.train()
    else:
        model.eval()

    results, times, edges = [], [], []
    for i in range(a.warmup + a.steps):
        pos, species, batch, energy_t, forces_t = batches[i % a.batches]
        t0 = time.perf_counter()
        pos, species, batch = pos.to(dev), species.to(dev), batch.to(dev)
        if train:
            energy_t, forces_t = energy_t.to(dev), forces_t.to(dev)
            pos.requires_grad_(True)
            energy, n_edges = model(pos, species, batch, a.graphs)
            forces = -torch.autograd.grad(energy.sum(), pos, create_graph=True)[0]
            loss = F.mse_loss(energy, energy_t) + a.force_weight * F.mse_loss(forces, forces_t)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            out = [loss.item()]  # the per-step read-back
        else:
            with torch.no_grad():
                energy, n_edges = model(pos, species, batch, a.graphs)
            out = energy.tolist()  # the per-step read-back
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
            edges.append(n_edges)
        results.append(struct.pack("<%df" % len(out), *out))
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
            if train:
                for p in model.parameters():
                    f.write(tensor_bytes(p))
    if a.time:
        print("gs-wl: e3nn_points variant=%s device=%s layers=%d mul=%d lmax=%d graphs=%d steps=%d warmup=%d "
              "e3nn=%s jit_mode=%s median_us=%.3f mean_us=%.3f edges=%.1f" % (
                  a.task, dev.type, a.layers, a.mul, a.lmax, a.graphs, len(times), a.warmup,
                  e3nn.__version__, e3nn.get_optimization_defaults().get("jit_mode", "-"),
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6,
                  statistics.mean(edges)), flush=True)


if __name__ == "__main__":
    main()
