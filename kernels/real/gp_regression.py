#!/usr/bin/env python3
"""Gaussian-process regression with GPyTorch (and BoTorch), for the real-program suite.

What a GPyTorch user writes (its "Simple GP Regression" tutorial and the
GPU one beside it): an exact GP model

    class ExactGPModel(gpytorch.models.ExactGP):
        def __init__(self, train_x, train_y, likelihood):
            super().__init__(train_x, train_y, likelihood)
            self.mean_module = gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())
        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(
                self.mean_module(x), self.covar_module(x))

with a GaussianLikelihood, both moved to the GPU with .cuda(), trained with
torch.optim.Adam (lr 0.1) on -ExactMarginalLogLikelihood, the loss read
back with loss.item() every iteration, then

    model.eval(); likelihood.eval()
    with torch.no_grad(), gpytorch.settings.fast_pred_var():
        observed_pred = likelihood(model(test_x))

The data: --n training inputs drawn uniformly from [0, 1]^--dim on the CPU
from --seed (the tutorial's 1-D tensor of shape [n] for --dim 1; [n, dim]
otherwise, with one lengthscale per dimension, ard_num_dims=dim, as users
write it), targets sum(sin(2 pi x)) plus N(0, 0.04) noise.  Float32 by
default, as the tutorial (torch's default dtype); --dtype float64.  All
parameters start at GPyTorch's constant defaults (raw values 0).

  --kernel rbf     (default) ScaleKernel(RBFKernel())
  --kernel matern  ScaleKernel(MaternKernel(nu=2.5))

  --task train     (default) a step is one training iteration:
                   optimizer.zero_grad(), output = model(train_x),
                   loss = -mll(output, train_y), loss.backward(),
                   loss.item(), optimizer.step().  GPyTorch picks the linear
                   algebra by size (linear_operator's settings):
                   * n <= max_cholesky_size (800): Cholesky.  The covariance
                     is evaluated densely (the kernel's elementwise kernels
                     and a GEMM, the noise added to the diagonal), factored
                     by torch.linalg.cholesky_ex (on CUDA PyTorch's default
                     linear-algebra backend: cuSOLVER's potrf), its info
                     tested on the host (torch.any(info): a synchronising
                     read) before the triangular solves (cuBLAS trsm) and
                     the log determinant; suite entry gp-cholesky at --n 500.
                   * n > 800: preconditioned conjugate gradients with Lanczos
                     quadrature (linear_operator's InvQuadLogdet and
                     linear_cg): the log determinant is estimated from
                     num_trace_samples (10) random probe vectors, torch.randn
                     on the device from the global generator; from
                     min_preconditioning_size (2000) on, a rank-15 pivoted
                     Cholesky preconditioner is built first (15 rounds of
                     argmax, gather and update kernels) and the probes are
                     drawn through it.  mBCG iterates on 11 right-hand sides
                     at once (10 probes and the targets): a kernel-matrix
                     product and about 40 small kernels an iteration, a
                     NaN check (torch.equal) before the loop, and two
                     synchronising reads an iteration: the Lanczos
                     coefficients' t_mat[k - 1, k].max() < 1e-6 test while
                     the tridiagonal matrices grow, and from the tenth
                     iteration on the residual test against cg_tolerance (1).
                     It runs at least max_lanczos_quadrature_iterations
                     (20) + 1 iterations, then on until the mean residual is
                     below the tolerance, so the trip count depends on the
                     data (21 in every step of --n 2000 and --n 1000 runs
                     on the CPU); the 20 x 20 tridiagonal matrices are then
                     copied to the CPU for torch.linalg.eigh.  The backward
                     pass reuses the forward's solves.  Suite entry gp-cg at
                     --n 2000.
                   The debug checks of ExactGP (torch.equal of the inputs
                   against the training inputs) and the kernel's x1 == x2
                   test are synchronising reads too.  Adam over the four
                   scalar parameters (PyTorch's default: foreach kernels on
                   CUDA).
  --task predict   --train-iters (50) untimed training iterations, then
                   model.eval(), likelihood.eval(); a step is one
                   predictive call on a new batch of --test points (8 random
                   batches, cycled, copied to the device per call) under
                   torch.no_grad() and fast_pred_var(): the test-train
                   covariance, the mean through the cached K^-1 y and the
                   variance through LOVE's cached root, plus the noise;
                   .mean.cpu() and .variance.cpu().  The first call (in
                   --warmup) computes the caches (Cholesky at n <= 800,
                   CG and Lanczos above).  Suite entry gp-predict.
  --task botorch   Bayesian optimisation's inner loop as BoTorch users write
                   it (its tutorials): the negated 6-d Hartmann function of
                   botorch.test_functions at --n random points, a
                   SingleTaskGP(train_X, train_Y) with BoTorch's defaults
                   (RBF kernel with its dimension-scaled LogNormal
                   lengthscale prior, a LogNormal noise prior, a Standardize
                   outcome transform), always float64 as BoTorch
                   recommends; fitted by BoTorch's own torch.optim path,
                   fit_gpytorch_mll(mll, optimizer=fit_gpytorch_mll_torch,
                   optimizer_kwargs=...) with step_limit --train-iters (50),
                   no stopping criterion and Adam at lr 0.1, untimed:
                   torch_minimize reads every step's loss back
                   (fval.cpu().item(), collected through its callback) and
                   clamps the parameters to their bounds after each step
                   (priors included in the loss); fit_gpytorch_mll would
                   retry with parameters resampled from the priors (the
                   global generator, seeded) if the fit raised a warning
                   other than an OptimizationWarning.  Then a step is one
                   evaluation of qLogExpectedImprovement (a
                   SobolQMCNormalSampler of 128
                   samples seeded from --seed, best_f the best observation)
                   on a batch of --test candidate sets of --q points each
                   under torch.no_grad(), as optimize_acqf does on its raw
                   samples: the posterior over [test, q] points (batched
                   q x q Cholesky factors), the samples, and the fat
                   smooth-max and log-softplus arithmetic, the values read
                   back with .cpu(); the first call (in --warmup) draws the
                   Sobol base samples and fills the posterior's caches.
                   --kernel and --dim do not apply.  Suite entry gp-botorch.

Counted on the CPU (torch 2.15, a TorchDispatchMode counting every aten
operation other than views: an estimate of the GPU's kernels, NOT measured
on a GPU): about 116 operations and 6 scalar reads a training step at --n
500 (the CPU's Adam is a loop over the parameters; CUDA's foreach Adam
launches fewer), about 1,250 operations and 30 scalar reads at --n 2000, 60
operations and a scalar read (plus the two .cpu() copies) a predictive
call, 110 operations and 3 scalar reads a botorch call.

--warmup W steps first (train: training iterations; predict and botorch:
calls, the first one filling the prediction caches), then --steps timed
ones.  --out writes, as little-endian bytes: every training iteration's
loss (float64, the value .item() returned; predict and botorch: their
--train-iters untimed iterations), then every parameter's final bytes in
named_parameters() order, then for predict every call's mean and variance
([test], the model's dtype) and for botorch every call's acquisition values
([test], float64).  --time prints one gs-wl line with the median wall time
of one step, read-backs included.  Determinism: the data on the CPU from
--seed; torch.manual_seed(seed) before training, so the CG probe vectors
(torch.randn on the device, the global generator) are the same draws in
every process; CUBLAS_WORKSPACE_CONFIG set before torch is imported and
torch.use_deterministic_algorithms(True, warn_only=True).
"""
import os

# cuBLAS is deterministic only with a fixed workspace configuration, which
# it reads when torch first initialises it: set it before importing torch.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
from functools import partial  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

import gpytorch  # noqa: E402
import torch  # noqa: E402


class ExactGPModel(gpytorch.models.ExactGP):
    """The tutorial's model: a constant mean and a scaled RBF (or Matern) kernel."""

    def __init__(self, train_x, train_y, likelihood, kernel, ard_dims):
        super().__init__(train_x, train_y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        if kernel == "rbf":
            base = gpytorch.kernels.RBFKernel(ard_num_dims=ard_dims)
        else:
            base = gpytorch.kernels.MaternKernel(nu=2.5, ard_num_dims=ard_dims)
        self.covar_module = gpytorch.kernels.ScaleKernel(base)

    def forward(self, x):
        mean_x = self.mean_module(x)
        covar_x = self.covar_module(x)
        return gpytorch.distributions.MultivariateNormal(mean_x, covar_x)


def tensor_bytes(t):
    """A tensor's raw bytes, C order (the host is little-endian)."""
    return t.detach().cpu().contiguous().numpy().tobytes()


def train(model, likelihood, train_x, train_y, iters, times):
    """The tutorial's training loop; returns every iteration's loss.item()."""
    model.train()
    likelihood.train()
    # The model's parameters include the likelihood's (ExactGP registers it).
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    losses = []
    for _ in range(iters):
        t0 = time.perf_counter()
        optimizer.zero_grad()
        output = model(train_x)
        loss = -mll(output, train_y)
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
        times.append(time.perf_counter() - t0)
    return losses


def make_gp(a, dev, dtype, gen):
    """The tutorial's data (from the CPU generator) and model, on the device."""
    shape = (a.n,) if a.dim == 1 else (a.n, a.dim)
    train_x = torch.rand(*shape, generator=gen, dtype=dtype)
    xs = train_x.view(a.n, -1)
    noise = torch.randn(a.n, generator=gen, dtype=dtype) * math.sqrt(0.04)
    train_y = torch.sin(xs * (2 * math.pi)).sum(-1) + noise
    test_shape = (8, a.test) if a.dim == 1 else (8, a.test, a.dim)
    tests = torch.rand(*test_shape, generator=gen, dtype=dtype).unbind(0)
    train_x, train_y = train_x.to(dev), train_y.to(dev)
    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = ExactGPModel(train_x, train_y, likelihood, a.kernel, None if a.dim == 1 else a.dim)
    # The likelihood is a submodule of the model: .to() moves both.
    model = model.to(device=dev, dtype=dtype)
    return model, likelihood, train_x, train_y, tests


def run_gp(a, dev, dtype, gen):
    """--task train and --task predict; returns (output chunks, step times, losses)."""
    model, likelihood, train_x, train_y, tests = make_gp(a, dev, dtype, gen)
    times = []
    if a.task == "train":
        losses = train(model, likelihood, train_x, train_y, a.warmup + a.steps, times)
        del times[:a.warmup]
    else:
        losses = train(model, likelihood, train_x, train_y, a.train_iters, [])
    chunks = [struct.pack("<%dd" % len(losses), *losses)]
    chunks += [tensor_bytes(p) for _, p in model.named_parameters()]
    if a.task == "predict":
        model.eval()
        likelihood.eval()
        preds = []
        with torch.no_grad(), gpytorch.settings.fast_pred_var():
            for i in range(a.warmup + a.steps):
                t0 = time.perf_counter()
                test_x = tests[i % 8].to(dev)
                observed_pred = likelihood(model(test_x))
                mean = observed_pred.mean.cpu()
                var = observed_pred.variance.cpu()
                if i >= a.warmup:
                    times.append(time.perf_counter() - t0)
                preds += [tensor_bytes(mean), tensor_bytes(var)]
        chunks += preds
    return chunks, times, losses


def run_botorch(a, dev, gen):
    """--task botorch; returns (output chunks, step times, losses)."""
    from botorch.acquisition.logei import qLogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.optim.fit import fit_gpytorch_mll_torch
    from botorch.sampling.normal import SobolQMCNormalSampler
    from botorch.test_functions import Hartmann

    tkwargs = dict(dtype=torch.double, device=dev)
    hartmann = Hartmann(dim=6, negate=True).to(**tkwargs)
    train_X = torch.rand(a.n, 6, generator=gen, dtype=torch.double).to(dev)
    train_Y = hartmann(train_X).unsqueeze(-1)
    candidates = torch.rand(8, a.test, a.q, 6, generator=gen, dtype=torch.double).unbind(0)
    model = SingleTaskGP(train_X, train_Y)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    # BoTorch's torch.optim fitting: a fixed number of Adam steps (no
    # stopping criterion), each closure's loss read back by torch_minimize
    # (fval.cpu().item()) and handed to the callback; the parameters are
    # clamped to their constraints' bounds after every step.
    losses = []
    fit_gpytorch_mll(mll, optimizer=fit_gpytorch_mll_torch, optimizer_kwargs=dict(
        step_limit=a.train_iters, stopping_criterion=None, optimizer=partial(torch.optim.Adam, lr=0.1),
        callback=lambda params, result: losses.append(result.fval)))
    chunks = [struct.pack("<%dd" % len(losses), *losses)]
    chunks += [tensor_bytes(p) for _, p in model.named_parameters()]
    sampler = SobolQMCNormalSampler(sample_shape=torch.Size([128]), seed=a.seed)
    acqf = qLogExpectedImprovement(model=model, best_f=train_Y.max(), sampler=sampler)
    times = []
    with torch.no_grad():
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            X = candidates[i % 8].to(dev)
            vals = acqf(X).cpu()
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
            chunks.append(tensor_bytes(vals))
    return chunks, times, losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=100, help="timed steps")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    ap.add_argument("--task", choices=("train", "predict", "botorch"), default="train")
    ap.add_argument("--kernel", choices=("rbf", "matern"), default="rbf", help="train and predict")
    ap.add_argument("--n", type=int, help="training points (train and predict: 500; botorch: 64)")
    ap.add_argument("--dim", type=int, default=1, help="input dimension (train and predict; botorch: 6)")
    ap.add_argument("--test", type=int, default=256,
                    help="predict: test points a call; botorch: candidate sets a call")
    ap.add_argument("--q", type=int, default=2, help="botorch: points a candidate set")
    ap.add_argument("--train-iters", type=int, default=50, help="predict and botorch: untimed training iterations")
    ap.add_argument("--dtype", choices=("float32", "float64"),
                    help="train and predict (default float32); botorch: float64")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.n is None:
        a.n = 64 if a.task == "botorch" else 500
    if a.task == "botorch" and a.dtype == "float32":
        ap.error("--task botorch runs in float64")
    if a.steps < 1 or (a.task != "train" and a.warmup < 1):
        ap.error("--steps must be >= 1, and predict and botorch need --warmup >= 1 (the first call fills the caches)")
    if a.task == "botorch" and a.train_iters < 1:
        ap.error("--task botorch needs --train-iters >= 1")
    dtype = torch.float64 if a.task == "botorch" or a.dtype == "float64" else torch.float32
    dev = torch.device(a.device)
    torch.use_deterministic_algorithms(True, warn_only=True)

    gen = torch.Generator().manual_seed(a.seed)
    # The global generators (CPU and CUDA) give the CG probe vectors and
    # anything else the libraries draw: the same draws in every process.
    torch.manual_seed(a.seed)
    if a.task == "botorch":
        chunks, times, losses = run_botorch(a, dev, gen)
    else:
        chunks, times, losses = run_gp(a, dev, dtype, gen)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(chunks))
    if a.time:
        n_path = "cholesky" if a.n <= gpytorch.settings.max_cholesky_size.value() else "cg"
        print("gs-wl: gp_regression variant=%s kernel=%s path=%s device=%s dtype=%s n=%d dim=%d steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f final_loss=%.6f" % (
                  a.task, "rbf" if a.task == "botorch" else a.kernel, n_path, dev.type, str(dtype)[6:], a.n,
                  6 if a.task == "botorch" else a.dim, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6, losses[-1]), flush=True)


if __name__ == "__main__":
    main()
