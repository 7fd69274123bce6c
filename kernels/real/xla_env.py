"""XLA's settings for the suite's JAX programs, before JAX is first imported.

XLA reads XLA_FLAGS, and JAX its platform, once, at the first import: every
JAX program of kernels/real calls configure() first.  The environment's own
XLA_FLAGS are kept (real.sh turns XLA's command buffers off through them);
a flag already there wins over the one added here.
"""
import os


def configure(device, autotune_off=True, deterministic=True):
    """Add the suite's XLA flags to XLA_FLAGS and pick JAX's platform.

    autotune_off: --xla_gpu_autotune_level=0, so every process picks the same
    GEMM algorithms; deterministic: --xla_gpu_deterministic_ops=true, so
    reductions run in one order.  device: "auto" leaves JAX's choice.
    """
    flags = os.environ.get("XLA_FLAGS", "")
    if autotune_off and "xla_gpu_autotune_level" not in flags:
        flags += " --xla_gpu_autotune_level=0"
    if deterministic and "xla_gpu_deterministic_ops" not in flags:
        flags += " --xla_gpu_deterministic_ops=true"
    os.environ["XLA_FLAGS"] = flags.strip()
    if device != "auto":
        os.environ["JAX_PLATFORMS"] = device
