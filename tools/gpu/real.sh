#!/bin/bash
# The real-program suite (kernels/real/) in ONE call: framework programs
# (PyTorch, transformers, torch.compile, JAX, CuPy, Triton, cuBLAS, CUDA
# runtime launch features) run without graphshim (eager), under graphshim
# (LD_PRELOAD), and in the framework's own graph mode (graph), INTERLEAVED
# for R rounds with the order rotated round by round, as bench.sh does.
# Every run's --out must be byte-identical to the first eager run's.  Then
# one extra run per mode, untimed, with libgscupti.so injected
# (CUDA_INJECTION64_PATH): CUPTI's count of the kernels really run, which
# must be the same with and without graphshim.  The table comes LAST; the
# notes under it give, per program, CUPTI's counts, graphshim's statistics,
# the before/before2 modes and each mode's rounds in the order they ran.
#
# Builds the C/CUDA programs and libgscupti.so (into GS_BUILD/kernels/real-bin,
# kept while their sources are older); expects libgraphshim.so built
# (common.sh's GS_LIB).  Exits 0 when every run passed and matched, 1
# otherwise, 77 where no GPU is present, 124 when cut short (TERM/INT:
# the rows finished are still printed).  Settings (environment):
#   GRAPHSHIM_SELFTIME=1 (exported) the graphshim and before runs time every launch
#                     call (docs/tools.md, host_*): a line per program says what a held
#                     launch, an eager one and a chunk's last cost graphshim and the driver
#   GS_REAL_PROGRAMS  names or shell patterns of the suite's programs (default
#                     all; `real.sh --list` prints them); a pattern that is no
#                     entry's name (or fw:NAME, always) may also name a
#                     framework (torch, transformers, timm, torchdiffeq,
#                     jax, flax, cupy, triton, numba, cuda, and pyg, lightning,
#                     gpytorch, botorch, e3nn, torchaudio, peft, sentence,
#                     diffrax, numpyro, cudapy; torch also selects the programs
#                     of libraries on PyTorch, jax those on JAX); programs
#                     run in the order of the words that select them (the
#                     first named get GS_REAL_BUDGET first), the suite's
#                     order among those one word selects
#   GS_REAL_MODES     modes to run, of each program's (default: all it has):
#                     eager graphshim graph (and before, before2: see below)
#   GS_REAL_ROUNDS    rounds (default 5)
#   GS_REAL_EXTRA_LIB another build of libgraphshim.so (default: all.sh's build of
#                     GS_CARRY_BEFORE, GS_BENCH_BEFORE_LIB): mode `before` preloads it,
#                     interleaved with the others (its note under the table: median, eager/before
#                     and before/graphshim, its coverage and steady state)
#   GS_REAL_EXTRA_ENV VAR=value words for mode `before`; set alone, mode `before` is
#                     this build under them (GS_REAL_EXTRA_ENV=GRAPHSHIM_GATE=eager:
#                     graphshim passing every launch through, in the same rounds)
#   GS_REAL_EXTRA_ENV2 VAR=value words for a second such mode, `before2`: this
#                     build under them, interleaved in the same rounds (two
#                     experiments share one call's eager and graphshim runs)
#   GS_REAL_SHIM_ENV  VAR=value words for modes graphshim, before and before2 alike
#                     (GS_REAL_SHIM_ENV=GRAPHSHIM_GATE=eager with GS_CARRY_BEFORE:
#                     this build and that one both sending every step eagerly)
#   GS_REAL_TIMEOUT   limit of one run in seconds (default 120)
#   GS_REAL_PRIME_TIMEOUT  limit of a compiling program's first run (default 420)
#   GS_REAL_BUDGET    seconds for the whole suite (default 540); programs not
#                     started by then are skipped with a note, one under way
#                     stops after its current round
#   GS_REAL_COUNT=0   no CUPTI counting runs
#   GS_REAL_TRACE=1   the counting runs also write GRAPHSHIM_TRACE per process,
#                     and each trace is checked against its statistics
#                     (graphshim trace summarize --check, into NAME.trace.json.check;
#                     its events other than launches go to NAME.trace.json.events)
#   GS_REAL_TRACE=timed  the timed graphshim (and before) runs write one too:
#                     with two rounds or more only the last round's, whose
#                     times are then left out of the medians (a trace's cost:
#                     nanogpt-async 0.4-1 ms a token); with one, its time
#                     includes the trace
#                     (GRAPHSHIM_TRACE_MAX 300000: the first trials fall early;
#                     its events other than launches go to .trace.json.events,
#                     and tools/gpu/losses.py's account of where its steady
#                     state went eager to .trace.json.losses, noted under 0.95),
#                     and tools/gpu/gate_trials.py shows each run's trials sample by
#                     sample (NAME.MODE.ROUND.PID.trace.json.gate; a note per run
#                     where a first verdict was eager, a sequence was tried twice or
#                     the watch kept a decision): the run-to-run spread of a
#                     program's coverage, looked into (costs the host time)
#   GS_REAL_TIMELINE=1  the counting runs also write the GPU's timeline per
#                     process (libgscupti's GS_CUPTI_TIMELINE, NAME.MODE.count.PID.gpu.txt;
#                     tools/gpu/timeline.py reads it)
#   GS_REAL_CACHE     compiled-kernel caches shared by the runs and kept between
#                     calls (Inductor, Triton, CuPy, JAX; default $TMPDIR/gs-real-cache)
#   GS_PIN            prefix of every run (default: taskset -c 2-5 where there
#                     are 8+ CPUs, 2,3 where 4+, none below; "" for none)
# The suite runs in its table's order, most telling first: at 5 rounds the
# whole of it takes longer than one budget (see kernels/real/README.md), so
# a call with the default budget covers the first entries and notes the
# rest as skipped; name the rest in a second call.
#   GS_CUPTI_INC, GS_CUPTI_LIB   cupti.h's directory and libcupti.so's path
#                     (default: the pip package nvidia-cuda-cupti, else CUDA's)
#   GS_NO_GPU_OK=1    run without a GPU: a dry run of the script on the CPU,
#                     each program that can with --device cpu and small sizes
#   GS_TABLE          also append the table to this file (all.sh sets it)
#   OUT               the table to $OUT/real-table.txt, statistics and logs
#                     to $OUT/real-runs.tar.gz (the device tool's folder)
# and those of common.sh (GS_BUILD, GS_LIB, GS_WORK, GS_PY).
set -u

# The suite.  One program a line:
#   name | needs | flags | modes | command | graph | cpu
# needs: the framework that must be present (torch, transformers, timm, torchdiffeq,
#   jax, flax, cupy, numba, triton, cuda: the C programs; and the libraries on
#   them, each checked by its import: see have() below); flags: "self" (the framework captures CUDA
#   graphs by itself even in the eager run), "compile" (a first, untimed run
#   fills the compile caches); modes: of eager graphshim graph; command:
#   leading VAR=value words are its environment; graph: what the graph mode
#   adds (leading VAR=value words override the environment, the rest are
#   arguments, later ones win); cpu: arguments added in a dry run without a
#   GPU ("-": the program needs a GPU).
SUITE='cublas|cuda|-|eager graphshim graph|$B/cublas_bias|--graph|-
launch-ex|cuda|-|eager graphshim graph|$B/launch_ex|--graph|-
nn-static|torch|-|eager graphshim graph|$PY $R/torch_nn_decode.py --cache static|--graph|--device cpu --tokens 24 --warmup 4 --layers 2
nn-dynamic|torch|-|eager graphshim|$PY $R/torch_nn_decode.py --cache dynamic|-|--device cpu --tokens 24 --warmup 4 --layers 2
infer-cnn|torch|-|eager graphshim graph|$PY $R/torch_infer.py --arch cnn --batch 4|--graph|--device cpu --steps 6 --warmup 2 --width 8
train-mlp|torch|-|eager graphshim|$PY $R/torch_train.py --arch mlp|-|--device cpu --steps 6 --warmup 2
hf-llama|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch llama --cache dynamic|-|--device cpu --tokens 6 --layers 1 --dim 128
compile|torch|compile|eager graphshim graph|$PY $R/torch_compile.py --mode default|--mode reduce-overhead|--device cpu --mode none --tokens 12 --warmup 2 --layers 1
jax|jax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_decode.py|XLA_FLAGS=|--device cpu --tokens 12 --warmup 2 --layers 2
cupy-cg|cupy|-|eager graphshim|$PY $R/cupy_solver.py --method cg|-|-
triton|triton|-|eager graphshim graph|$PY $R/triton_loop.py|--graph|--device cpu --steps 2 --warmup 1 --rows 4 --dim 128 --layers 2
hf-llama-static|transformers|self,compile|eager graphshim|$PY $R/hf_generate.py --arch llama --cache static|-|--device cpu --tokens 6 --layers 1 --dim 128
compile-ro|torch|self,compile|eager graphshim|$PY $R/torch_compile.py --mode reduce-overhead|-|--device cpu --mode none --tokens 12 --warmup 2 --layers 1
jax-cb|jax|self|eager graphshim|$PY $R/jax_decode.py|-|--device cpu --tokens 12 --warmup 2 --layers 2
infer-mixer|torch|-|eager graphshim graph|$PY $R/torch_infer.py --arch mixer --batch 1|--graph|--device cpu --steps 6 --warmup 2
train-block|torch|-|eager graphshim|$PY $R/torch_train.py --arch block --layers 2|-|--device cpu --steps 4 --warmup 1 --batch 4 --seq 8
hf-gpt2|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch gpt2 --cache dynamic|-|--device cpu --tokens 6 --layers 1 --dim 128
jax-scan|jax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_decode.py --layers-loop scan|XLA_FLAGS=|--device cpu --tokens 12 --warmup 2 --layers 2
cupy-jacobi|cupy|-|eager graphshim|$PY $R/cupy_solver.py --method jacobi --n 512 --check 20|-|-
cublas-f32|cuda|-|eager graphshim graph|$B/cublas_bias --dtype f32 --batch 1 --layers 8 --dim 256|--graph|-
launch-ex-c8|cuda|-|eager graphshim graph|$B/launch_ex --cluster 8 --blocks 256 --pairs 4|--graph|-
launch-ex-coop|cuda|-|eager graphshim|$B/launch_ex --coop --pairs 4|-|-
numba|numba|-|eager graphshim|$PY $R/numba_particles.py|-|--device cpu --n 64 --steps 2 --warmup 1 --check 1
numba-small|numba|-|eager graphshim|$PY $R/numba_particles.py --n 512 --check 1|-|--device cpu --n 32 --steps 2 --warmup 1 --check 2
train-amp|torch|-|eager graphshim|$PY $R/torch_train.py --arch mlp --amp fp16|-|--device cpu --steps 6 --warmup 2
train-prefetch|torch|-|eager graphshim|$PY $R/torch_train.py --arch mlp --prefetch|-|--device cpu --steps 6 --warmup 2
train-fused|torch|-|eager graphshim|$PY $R/torch_train.py --arch block --layers 2 --amp fp16 --fused|-|--device cpu --steps 4 --warmup 1 --batch 4 --seq 8
jax-train|flax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_train.py|XLA_FLAGS=|--device cpu --steps 6 --warmup 2
jax-train-cb|flax|self|eager graphshim|$PY $R/jax_train.py|-|--device cpu --steps 6 --warmup 2
jax-train-block|flax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_train.py --arch block --layers 2|XLA_FLAGS=|--device cpu --steps 4 --warmup 1 --batch 4 --seq 8 --layers 2
cupy-fft|cupy|-|eager graphshim|$PY $R/cupy_solver.py --method spectral|-|-
cupy-spcg|cupy|-|eager graphshim|$PY $R/cupy_solver.py --method spcg|-|-
hf-sample|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch llama --cache dynamic --sample|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-t5|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch t5 --cache dynamic|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-encode|transformers|-|eager graphshim|$PY $R/hf_encode.py --arch bert --task embed|-|--device cpu --steps 8 --warmup 2 --layers 2 --dim 128 --heads 4
hf-encode-distil|transformers|-|eager graphshim|$PY $R/hf_encode.py --arch distilbert --task classify|-|--device cpu --steps 8 --warmup 2 --layers 2 --dim 128 --heads 4
timm-vit|timm|-|eager graphshim graph|$PY $R/timm_infer.py --model vit_tiny_patch16_224|--graph|--device cpu --model vit_tiny_patch16_224 --steps 6 --warmup 2
timm-effnet|timm|-|eager graphshim graph|$PY $R/timm_infer.py --model efficientnet_b0 --batch 1|--graph|--device cpu --model efficientnet_b0 --steps 4 --warmup 1 --batch 1
ode-dopri5|torchdiffeq|-|eager graphshim|$PY $R/torch_ode.py --method dopri5|-|--device cpu --steps 6 --warmup 2
ode-rk4|torchdiffeq|-|eager graphshim|$PY $R/torch_ode.py --method rk4|-|--device cpu --steps 6 --warmup 2
hf-qwen2|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch qwen2 --cache dynamic|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-mistral|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch mistral --cache dynamic --attn eager --batch 2|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-bart|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch bart --cache dynamic|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-opt|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch opt --cache dynamic --layers 6 --dim 256 --heads 4|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-neox|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch neox --cache dynamic --dtype float16|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-phi|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch phi --cache dynamic --sample|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-gemma|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch gemma --cache dynamic --layers 3 --dim 384 --heads 6|-|--device cpu --tokens 6 --layers 1 --dim 128
diffusion|torch|-|eager graphshim graph|$PY $R/torch_diffusion.py|--graph|--device cpu --steps 4 --warmup 2 --sample-steps 2 --width 8 --size 16 --batch 1
diffusion-ddpm|torch|-|eager graphshim|$PY $R/torch_diffusion.py --scheduler ddpm|-|--device cpu --steps 4 --warmup 2 --sample-steps 2 --width 8 --size 16 --batch 1
rnn-lstm|torch|-|eager graphshim|$PY $R/torch_rnn.py --cell lstm|-|--device cpu --tokens 12 --warmup 4 --hidden 64
rnn-gru|torch|-|eager graphshim|$PY $R/torch_rnn.py --cell gru --batch 4|-|--device cpu --tokens 12 --warmup 4 --hidden 64
jax-while|jax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_solver.py --loop while|XLA_FLAGS=|--device cpu --steps 4 --warmup 1 --n 32
jax-fori|jax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_solver.py --loop fori|XLA_FLAGS=|--device cpu --steps 4 --warmup 1 --n 32
hf-beam|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch llama --cache dynamic --beams 4|-|--device cpu --tokens 6 --layers 1 --dim 128
rl|torch|-|eager graphshim|$PY $R/torch_rl.py|-|--device cpu --steps 32 --warmup 16 --rollout 16 --envs 4 --hidden 32
encoder|torch|-|eager graphshim|$PY $R/torch_encoder.py|-|--device cpu --steps 8 --warmup 2 --layers 2 --dim 64 --ffn 128
encoder-prenorm|torch|-|eager graphshim|$PY $R/torch_encoder.py --norm-first|-|--device cpu --steps 8 --warmup 2 --layers 2 --dim 64 --ffn 128
encoder-modules|torch|-|eager graphshim|$PY $R/torch_encoder.py --no-fastpath|-|--device cpu --steps 8 --warmup 2 --layers 2 --dim 64 --ffn 128
wavenet|torch|-|eager graphshim|$PY $R/torch_wavenet.py|-|--device cpu --tokens 12 --warmup 4 --dilations 6
wavenet-fast|torch|-|eager graphshim|$PY $R/torch_wavenet.py --fast|-|--device cpu --tokens 12 --warmup 4 --dilations 6
twotower|torch|-|eager graphshim|$PY $R/torch_twotower.py|-|--device cpu --steps 8 --warmup 2 --users 1000 --items 256
hf-mixtral|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch mixtral --cache dynamic|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-mixtral-b4|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch mixtral --cache dynamic --batch 4|-|--device cpu --tokens 6 --layers 1 --dim 128
train-compile|torch|compile|eager graphshim|$PY $R/torch_train.py --arch block --layers 2 --compile|-|-
train-loader|torch|-|eager graphshim|$PY $R/torch_train.py --arch mlp --loader 2|-|--device cpu --steps 6 --warmup 2 --loader 0
train-loader-log|torch|-|eager graphshim|$PY $R/torch_train.py --arch block --layers 2 --loader 2 --log-every 10 --warmup 20 --steps 200|-|--device cpu --steps 8 --warmup 4 --batch 4 --seq 8 --loader 0 --log-every 4
jax-pyloop|jax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_solver.py --loop python|XLA_FLAGS=|--device cpu --steps 4 --warmup 1 --n 32
jax-eager|jax|-|eager graphshim|$PY $R/jax_solver.py --loop eager --steps 20 --warmup 2|-|--device cpu --steps 2 --warmup 1 --n 32
hf-assist|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch llama --cache dynamic --assistant 1 --rounds 6|-|--device cpu --tokens 6 --layers 2 --dim 128 --assistant 1
pyg-gcn|pyg|-|eager graphshim|$PY $R/pyg_gnn.py --model gcn --task train|-|--device cpu --steps 4 --warmup 1
pyg-gat|pyg|-|eager graphshim|$PY $R/pyg_gnn.py --model gat --task infer|-|--device cpu --steps 4 --warmup 1
lightning-mlp|lightning|-|eager graphshim|$PY $R/lightning_train.py --arch mlp|-|--device cpu --steps 6 --warmup 2 --log-every-n-steps 2
gp-cg|gpytorch|-|eager graphshim|$PY $R/gp_regression.py --task train --n 2000|-|--device cpu --steps 2 --warmup 1 --n 1000
jax-ode|diffrax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_ode.py --controller pid|XLA_FLAGS=|--device cpu --steps 4 --warmup 1
numpyro-nuts-py|numpyro|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/numpyro_mcmc.py --loop python|XLA_FLAGS=|--device cpu --steps 2 --num-warmup 20 --num-samples 20 --n 100
e3nn-infer|e3nn|-|eager graphshim|$PY $R/e3nn_points.py --task infer|-|--device cpu --steps 3 --warmup 1 --graphs 4 --max-atoms 24 --layers 2 --mul 8
audio-kws|torchaudio|-|eager graphshim|$PY $R/audio_kws.py|-|--device cpu --steps 8 --warmup 2
cuda-python|cudapy|-|eager graphshim|$PY $R/cuda_python.py --memory cupy|-|--device cpu --steps 4 --warmup 1 --n 32 --sweeps 2
peft-generate|peft|-|eager graphshim|$PY $R/hf_peft.py --task generate|-|--device cpu --tokens 6 --layers 1 --dim 128
st-encode|sentence|-|eager graphshim|$PY $R/st_encode.py|-|--device cpu --steps 4 --warmup 1 --layers 2 --dim 128 --heads 4 --sentences 16 --batch-size 8
gp-botorch|botorch|-|eager graphshim|$PY $R/gp_regression.py --task botorch|-|--device cpu --steps 4 --warmup 1 --train-iters 5
lightning-cnn|lightning|-|eager graphshim|$PY $R/lightning_train.py --arch cnn --sched cosine|-|--device cpu --steps 4 --warmup 1 --log-every-n-steps 2
pyg-sage|pyg|-|eager graphshim|$PY $R/pyg_gnn.py --model sage --task train|-|--device cpu --steps 4 --warmup 1
gp-cholesky|gpytorch|-|eager graphshim|$PY $R/gp_regression.py --task train --n 500|-|--device cpu --steps 4 --warmup 1 --n 200
gp-predict|gpytorch|-|eager graphshim|$PY $R/gp_regression.py --task predict|-|--device cpu --steps 4 --warmup 1 --train-iters 5 --n 200
jax-ode-fixed|diffrax|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_ode.py --controller constant|XLA_FLAGS=|--device cpu --steps 4 --warmup 1
jax-ode-train|diffrax|compile|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_ode.py --train|XLA_FLAGS=|--device cpu --steps 2 --warmup 1
numpyro-nuts|numpyro|-|eager graphshim graph|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/numpyro_mcmc.py --loop jit|XLA_FLAGS=|--device cpu --steps 2 --num-warmup 20 --num-samples 20 --n 100
e3nn-train|e3nn|-|eager graphshim|$PY $R/e3nn_points.py --task train|-|--device cpu --steps 2 --warmup 1 --graphs 4 --max-atoms 24 --layers 2 --mul 8
audio-kws-b8|torchaudio|-|eager graphshim|$PY $R/audio_kws.py --batch 8 --augment|-|--device cpu --steps 8 --warmup 2 --batch 2 --augment
cuda-python-buffer|cudapy|-|eager graphshim|$PY $R/cuda_python.py --memory buffer|-|--device cpu --steps 4 --warmup 1 --n 32 --sweeps 2
peft-train|peft|-|eager graphshim|$PY $R/hf_peft.py --task train|-|--device cpu --steps 4 --warmup 1 --layers 1 --dim 128 --batch 2 --seq 16
peft-train-120|peft|-|eager graphshim|$PY $R/hf_peft.py --task train --steps 120|-|--device cpu --steps 4 --warmup 1 --layers 1 --dim 128 --batch 2 --seq 16
lightning-bf16|lightning|-|eager graphshim|$PY $R/lightning_train.py --arch mlp --precision bf16-mixed|-|--device cpu --steps 6 --warmup 2 --log-every-n-steps 2
compile-dyn|torch|compile|eager graphshim|$PY $R/torch_compile.py --mode default --cache dynamic|-|--device cpu --mode none --cache dynamic --tokens 12 --warmup 2 --layers 1
cupy-langevin|cupy|-|eager graphshim|$PY $R/cupy_montecarlo.py --model langevin|-|-
cupy-paths|cupy|-|eager graphshim|$PY $R/cupy_montecarlo.py --model paths|-|-
kalman|torch|-|eager graphshim|$PY $R/torch_kalman.py|-|--device cpu --steps 4 --warmup 1 --batch 8
kalman-ex|torch|-|eager graphshim|$PY $R/torch_kalman.py --no-check|-|--device cpu --steps 4 --warmup 1 --batch 8
triton-mm|triton|-|eager graphshim graph|$PY $R/triton_loop.py --matmul|--graph|--device cpu --steps 2 --warmup 1 --rows 4 --dim 128 --layers 2
nanogpt|torch|-|eager graphshim|$PY $R/torch_nanogpt.py|-|--device cpu --steps 2 --warmup 1 --tokens 8 --layers 1 --dim 64 --heads 2 --vocab 256 --block 32
nanogpt-chat|torch|-|eager graphshim|$PY $R/torch_nanogpt.py --greedy --readback --dtype bfloat16 --block 128 --tokens 128|-|--device cpu --steps 2 --warmup 1 --tokens 8 --layers 1 --dim 64 --heads 2 --vocab 256 --block 16 --greedy --readback --dtype float32
train-ddp|torch|-|eager graphshim|$PY $R/torch_train.py --arch mlp --ddp|-|--device cpu --steps 6 --warmup 2 --ddp
train-ddp-block|torch|-|eager graphshim|$PY $R/torch_train.py --arch block --layers 2 --ddp --bucket-mb 0.25 --amp bf16|-|--device cpu --steps 4 --warmup 1 --batch 4 --seq 8 --ddp --bucket-mb 0.25
train-deep|torch|-|eager graphshim|$PY $R/torch_train.py --arch block --layers 64 --dim 32 --steps 20 --warmup 3|-|--device cpu --steps 3 --warmup 1 --batch 4 --seq 8 --layers 2
pinn|torch|-|eager graphshim|$PY $R/torch_pinn.py|-|--device cpu --steps 3 --warmup 1 --points 128 --edge 16 --layers 2
pinn-lbfgs|torch|-|eager graphshim|$PY $R/torch_pinn.py --optim lbfgs --steps 30|-|--device cpu --steps 3 --warmup 1 --points 128 --edge 16 --layers 2 --optim lbfgs
detect|torchvision|-|eager graphshim|$PY $R/tv_detect.py|-|--device cpu --steps 2 --warmup 1 --batch 1 --size 160
detect-ssd|torchvision|-|eager graphshim|$PY $R/tv_detect.py --model ssdlite --batch 4|-|--device cpu --steps 2 --warmup 1 --batch 1 --model ssdlite
serve|torch|-|eager graphshim|$PY $R/torch_serve.py|-|--device cpu --steps 30 --warmup 4 --layers 1 --dim 64 --requests 8 --max-new 12
serve-fp16|torch|-|eager graphshim|$PY $R/torch_serve.py --dtype float16 --slots 16 --admit 4 --requests 128 --layers 6 --dim 384 --heads 6|-|--device cpu --steps 30 --warmup 4 --layers 1 --dim 64 --requests 8 --max-new 12 --slots 4
threads|torch|-|eager graphshim|$PY $R/torch_threads.py --streams own|-|--device cpu --requests 2 --warmup 1 --tokens 4 --layers 1 --dim 64 --heads 2
threads-default|torch|-|eager graphshim|$PY $R/torch_threads.py --streams default|-|--device cpu --requests 2 --warmup 1 --tokens 4 --layers 1 --dim 64 --heads 2
threads-4|torch|-|eager graphshim|$PY $R/torch_threads.py --streams own --threads 4 --layers 2 --dim 256 --heads 4|-|--device cpu --requests 2 --warmup 1 --tokens 4 --layers 1 --dim 64 --heads 2 --threads 4
threads-event|torch|-|eager graphshim|$PY $R/torch_threads.py --streams own --readback event|-|--device cpu --requests 2 --warmup 1 --tokens 4 --layers 1 --dim 64 --heads 2
threads-query|torch|-|eager graphshim|$PY $R/torch_threads.py --streams own --readback query|-|--device cpu --requests 2 --warmup 1 --tokens 4 --layers 1 --dim 64 --heads 2
threads-monitor|torch|-|eager graphshim|$PY $R/torch_threads.py --streams own --monitor 2|-|--device cpu --requests 2 --warmup 1 --tokens 4 --layers 1 --dim 64 --heads 2 --monitor 2
cupy-cg-async|cupy|-|eager graphshim|$PY $R/cupy_solver.py --method cg --pool async|-|-
nanogpt-async|torch|-|eager graphshim|PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync $PY $R/torch_nanogpt.py --greedy --readback|-|--device cpu --steps 2 --warmup 1 --tokens 8 --layers 1 --dim 64 --heads 2 --vocab 256 --block 16 --greedy --readback
train-async|torch|-|eager graphshim|PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync $PY $R/torch_train.py --arch mlp|-|--device cpu --steps 6 --warmup 2
hf-llama-async|transformers|-|eager graphshim|PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync $PY $R/hf_generate.py --arch llama --cache dynamic|-|--device cpu --tokens 6 --layers 1 --dim 128
nanogpt-expandable|torch|-|eager graphshim|PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $PY $R/torch_nanogpt.py --greedy --readback|-|--device cpu --steps 2 --warmup 1 --tokens 8 --layers 1 --dim 64 --heads 2 --vocab 256 --block 16 --greedy --readback
jax-platform|jax|-|eager graphshim graph|XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_decode.py|XLA_FLAGS=|--device cpu --tokens 12 --warmup 2 --layers 2
thrust-cg|cuda|-|eager graphshim|$B/thrust_cg|-|-
thrust-cg-stream|cuda|-|eager graphshim|$B/thrust_cg --stream --n 64|-|-
solver-hostfn|cuda|-|eager graphshim graph|$B/solver_hostfn --hostfn|--graph|-
solver-managed|cuda|-|eager graphshim graph|$B/solver_hostfn --hostfn --managed --async-alloc --check 4|--graph|-
solver-copy|cuda|-|eager graphshim graph|$B/solver_hostfn --n 128 --inner 8 --check 16|--graph|-
hf-mamba|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch mamba --cache dynamic --layers 4 --dim 256|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-gemma2|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch gemma2 --cache dynamic --attn eager --layers 4 --dim 256 --heads 4|-|--device cpu --tokens 6 --layers 2 --dim 128
hf-falcon|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch falcon --cache dynamic|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-bloom|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch bloom --cache dynamic --attn eager --dtype float16|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-qwen2moe|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch qwen2moe --cache dynamic --experts 8|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-phi3|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch phi3 --cache dynamic --sample|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-gptj|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch gptj --cache dynamic --attn eager --batch 2|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-starcoder2|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch starcoder2 --cache dynamic --dtype float16|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-compile|transformers|compile|eager graphshim|$PY $R/hf_generate.py --arch llama --cache dynamic --compile --layers 2 --dim 256 --heads 4|-|--device cpu --tokens 6 --layers 1 --dim 128
nn-sample|torch|-|eager graphshim graph|$PY $R/torch_nn_decode.py --cache static --sample topk --batch 4|--graph|--device cpu --tokens 24 --warmup 4 --layers 2 --batch 2
nn-sample-graph|torch|-|eager graphshim|$PY $R/torch_nn_decode.py --cache static --sample topk --batch 4 --graph|-|-
nn-sample-dyn|torch|-|eager graphshim|$PY $R/torch_nn_decode.py --cache dynamic --sample topk|-|--device cpu --tokens 24 --warmup 4 --layers 2
quant-fp8|torch|-|eager graphshim|$PY $R/torch_quant.py --quant fp8|-|-
quant-int8|torch|-|eager graphshim|$PY $R/torch_quant.py --quant int8|-|-
quant-bf16|torch|-|eager graphshim|$PY $R/torch_quant.py --quant none|-|--device cpu --tokens 4 --warmup 1 --layers 1 --batch 4 --dim 64 --ffn 128 --vocab 256
torch-cupy|cupy|-|eager graphshim|$PY $R/torch_cupy_mix.py|-|-
jit-lstm|torch|-|eager graphshim|$PY $R/torch_jit.py|-|--device cpu --steps 8 --warmup 4 --hidden 32
train-events|torch|-|eager graphshim|$PY $R/torch_train.py --arch mlp --cuda-events|-|-
compile-break|torch|compile|eager graphshim graph|$PY $R/torch_compile.py --mode default --breaks|--mode reduce-overhead|--device cpu --mode none --breaks --tokens 12 --warmup 2 --layers 1
compile-ro-break|torch|self,compile|eager graphshim|$PY $R/torch_compile.py --mode reduce-overhead --breaks|-|--device cpu --mode none --breaks --tokens 12 --warmup 2 --layers 1
train-ckpt|torch|-|eager graphshim|$PY $R/torch_train.py --arch block --checkpoint --dropout 0.1|-|--device cpu --steps 4 --warmup 1 --batch 4 --seq 8
spectral|torch|-|eager graphshim|$PY $R/torch_spectral.py|-|--device cpu --steps 4 --warmup 1 --n 16 --batch 2
spectral-fixed|torch|-|eager graphshim|$PY $R/torch_spectral.py --check 0 --n 128 --batch 4 --dtype float64|-|--device cpu --steps 4 --warmup 1 --n 16 --batch 2
lm-fit|torch|-|eager graphshim|$PY $R/torch_lm.py|-|--device cpu --steps 6 --warmup 2 --batch 8 --samples 16 --restart 4
lm-fit-ex|torch|-|eager graphshim|$PY $R/torch_lm.py --no-check --dtype float32 --log 10|-|--device cpu --steps 6 --warmup 2 --batch 8 --samples 16 --restart 4
vi-bnn|torch|-|eager graphshim|$PY $R/torch_vi.py|-|--device cpu --steps 4 --warmup 1 --points 512 --hidden 16
vi-bnn-fast|torch|-|eager graphshim|$PY $R/torch_vi.py --no-validate|-|--device cpu --steps 4 --warmup 1 --points 512 --hidden 16
kmeans|torch|-|eager graphshim|$PY $R/torch_kmeans.py|-|--device cpu --points 2048 --restarts 2 --max-iter 8
train-accum|torch|-|eager graphshim|$PY $R/torch_train.py --arch block --layers 2 --accum 4 --clip 1.0 --amp bf16|-|--device cpu --steps 4 --warmup 1 --batch 4 --seq 8
train-accum-fp16|torch|-|eager graphshim|$PY $R/torch_train.py --arch mlp --accum 2 --clip 1.0 --amp fp16|-|--device cpu --steps 4 --warmup 1
augment|torchvision|-|eager graphshim|$PY $R/torch_augment.py|-|--device cpu --steps 3 --warmup 1 --images 64 --width 8
augment-sample|torchvision|-|eager graphshim|$PY $R/torch_augment.py --per-sample --batch 16 --steps 30|-|--device cpu --steps 2 --warmup 1 --images 64 --width 8
augment-fixed|torchvision|-|eager graphshim|$PY $R/torch_augment.py --no-augment|-|--device cpu --steps 3 --warmup 1 --images 64 --width 8
sparse-cg|torch|-|eager graphshim|$PY $R/torch_sparse.py|-|--device cpu --steps 4 --warmup 1 --n 8 --restart 2
sparse-cg-mm|torch|-|eager graphshim|$PY $R/torch_sparse.py --rhs 8 --n 96 --dtype float32|-|--device cpu --steps 4 --warmup 1 --n 8 --rhs 2 --restart 2
profiled-train|torch|-|eager graphshim|$PY $R/torch_profiled.py|-|--device cpu --steps 6 --warmup 2 --wait 1 --active 2 --width 32
numba-stream|numba|-|eager graphshim|$PY $R/numba_stream.py|-|--device cpu --tracks 64 --steps 2 --warmup 1
priority-serve|torch|-|eager graphshim|$PY $R/torch_priority.py|-|--device cpu --steps 4 --warmup 1 --bulk-batch 64 --bulk-width 32 --req-width 16
jax-train-log|flax|-|eager graphshim|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_train.py --callback debug|-|--device cpu --steps 4 --warmup 1
jax-train-io|flax|-|eager graphshim|XLA_FLAGS=--xla_gpu_enable_command_buffer= $PY $R/jax_train.py --callback io|-|--device cpu --steps 4 --warmup 1
jax-train-log-cb|flax|self|eager graphshim|$PY $R/jax_train.py --callback debug|-|--device cpu --steps 4 --warmup 1
func-dpsgd|torch|-|eager graphshim|$PY $R/torch_func.py --mode dpsgd|-|--device cpu --steps 4 --warmup 1 --width 16
func-ensemble|torch|-|eager graphshim|$PY $R/torch_func.py --mode ensemble|-|--device cpu --steps 4 --warmup 1 --width 16
seq2seq|torch|-|eager graphshim|$PY $R/torch_seq2seq.py|-|--device cpu --steps 2 --warmup 1 --len 6
seq2seq-b4|torch|-|eager graphshim|$PY $R/torch_seq2seq.py --batch 4 --dec 3 --len 32|-|--device cpu --steps 2 --warmup 1 --len 6 --batch 4
hf-short|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch llama --cache dynamic --warmup 0 --rounds 1 --tokens 48|-|--device cpu --tokens 6 --layers 1 --dim 128
hf-short-gemma2|transformers|-|eager graphshim|$PY $R/hf_generate.py --arch gemma2 --cache dynamic --attn eager --layers 4 --dim 256 --heads 4 --warmup 0 --rounds 1 --tokens 96|-|--device cpu --tokens 6 --layers 2 --dim 128'


if [ "${1:-}" = --list ]; then
	echo "$SUITE" | awk -F'|' '{ printf "%-16s %-13s %-13s %s\n", $1, $2, $3, $4 }'
	exit 0
fi

. "$(dirname "$0")/common.sh"
R=$GS_SRC/kernels/real
B=$GS_BUILD/kernels/real-bin
PY=$GS_PY

GPU=1
gs_gpu_present || GPU=0
if [ $GPU = 0 ] && [ "${GS_NO_GPU_OK:-0}" != 1 ]; then
	echo "real: no GPU (nvidia-smi -L found none): skipped"
	exit 77
fi
if [ ! -f "$GS_LIB" ]; then
	echo "real: $GS_LIB not found: build first (make -j)"
	exit 99
fi
# all.sh's build of .gpucarry/before.tar (GS_CARRY_BEFORE) is the default.
GS_REAL_EXTRA_LIB=${GS_REAL_EXTRA_LIB:-${GS_BENCH_BEFORE_LIB:-}}
if [ -n "${GS_REAL_EXTRA_LIB:-}" ] && [ ! -f "$GS_REAL_EXTRA_LIB" ]; then
	echo "real: GS_REAL_EXTRA_LIB=$GS_REAL_EXTRA_LIB not found"
	exit 99
fi

ROUNDS=${GS_REAL_ROUNDS:-5}
TLIM=${GS_REAL_TIMEOUT:-120}
PRIME_TLIM=${GS_REAL_PRIME_TIMEOUT:-420}
BUDGET=${GS_REAL_BUDGET:-540}
T0=$(date +%s)
# Pinned like bench.sh, so runs vary less between processes; four CPUs
# where the machine has them, for the frameworks' helper threads.
NCPU=$(nproc)
if [ "$NCPU" -ge 8 ]; then CORES=2-5; elif [ "$NCPU" -ge 4 ]; then CORES=2,3; else CORES=""; fi
PIN=${GS_PIN-$(command -v taskset >/dev/null 2>&1 && [ -n "$CORES" ] && echo "taskset -c $CORES")}
W=$GS_WORK/real
mkdir -p "$W"
CACHE=${GS_REAL_CACHE:-${TMPDIR:-/tmp}/gs-real-cache}
mkdir -p "$CACHE"
# Every run: no hub access, JAX allocating as it goes, compiled kernels in
# caches shared by all runs (so only a program's first run compiles).
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export TORCHINDUCTOR_CACHE_DIR=$CACHE/inductor TRITON_CACHE_DIR=$CACHE/triton CUPY_CACHE_DIR=$CACHE/cupy
export JAX_COMPILATION_CACHE_DIR=$CACHE/jax JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0
export PYTHONDONTWRITEBYTECODE=1
ROWS=""
NOTES=""
LEFT=""
DURS=""
FAILS=0
TITLE="real programs on $(nvidia-smi -L 2>/dev/null | head -n 1 | sed 's/ (UUID.*//')"
[ $GPU = 1 ] || TITLE="real programs: DRY RUN without a GPU (--device cpu, small sizes)"

note() { NOTES="$NOTES$*
"; }

print_table() {
	local hdr
	hdr=$(printf '%-16s %6s %10s %10s %10s  %-24s %9s %9s %9s %13s %9s %6s %-11s  %s' program rounds \
		"eager_us" "shim_us" "graph_us" "speedup (95% CI)" "grph/shim" "cupti_e" "cupti_s" \
		"launches" "replayed" "cov" "steady" identical)
	{
		echo
		echo "== $TITLE: median step time (us), $ROUNDS rounds interleaved =="
		echo "$hdr"
		printf '%s' "$ROWS"
		printf '%s' "$NOTES"
		echo "speedup = eager/graphshim (bootstrap 95% interval); grph/shim = graph/graphshim"
		echo "(1.00 = graphshim as fast as the framework's own graphs); cupti_e/cupti_s: CUPTI's kernel"
		echo "count in the eager and graphshim counting runs (! = they differ); launches: graphshim's"
		echo "statistics, main process, median over rounds (sequence elements; /kernels where it counts them)."
		echo "cov: replayed/launches of the whole run; steady: of its second half (coverage_steady, warm-up,"
		echo "loading and learning left out), median over rounds +- half its range over rounds, in points."
		if [ "${GS_REAL_TRACE:-0}" = timed ] && [ "$ROUNDS" -ge 2 ]; then
			echo "GS_REAL_TRACE=timed: the last round's graphshim runs wrote traces and are left out of the times."
		elif [ "${GS_REAL_TRACE:-0}" = timed ]; then
			echo "GS_REAL_TRACE=timed: the timed graphshim runs wrote traces, whose cost their times include."
		fi
	} >"$W/table.txt"
	cat "$W/table.txt"
	[ -z "${GS_TABLE:-}" ] || cat "$W/table.txt" >>"$GS_TABLE"
	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT"
		cp "$W/table.txt" "$OUT/real-table.txt"
		# Statistics and logs (no outputs); traces only while the archive
		# stays within what the device tool brings back (16 MiB a file).
		(cd "$GS_WORK" && tar czf "$OUT/real-runs.tar.gz" --exclude='*.out' real 2>/dev/null)
		if [ "$(stat -c %s "$OUT/real-runs.tar.gz" 2>/dev/null || echo 0)" -gt 15000000 ]; then
			(cd "$GS_WORK" && tar czf "$OUT/real-runs.tar.gz" --exclude='*.out' \
				--exclude='*.trace.json' real 2>/dev/null)
			echo "real: traces left out of real-runs.tar.gz (over 15 MB)"
		fi
	fi
}
CHILD="" CUR="" CUR_ROUND=""
interrupted() {
	[ -z "$CHILD" ] || kill -TERM "$CHILD" 2>/dev/null
	echo "real: interrupted"
	[ -z "$CUR" ] || note "$CUR: cut short in round $CUR_ROUND (no row; its runs are under $W)"
	note "interrupted: the rows above are what finished"
	print_table
	exit 124
}
trap interrupted TERM INT

# med FILE: the median of a file of numbers, "-" when there is none.
med() {
	if [ -s "$1" ]; then gs_median <"$1"; else echo -; fi
}

over_budget() { [ $(($(date +%s) - T0)) -ge "$BUDGET" ]; }

# --- Build: the C/CUDA programs and libgscupti.so ------------------------
# newer SRC... : true when the target ($1) is missing or older than a source.
stale() {
	local t=$1 s
	shift
	[ -f "$t" ] || return 0
	for s in "$@"; do [ "$s" -nt "$t" ] && return 0; done
	return 1
}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
HAVE_C=0
mkdir -p "$B"
if [ -x "$NVCC" ]; then
	HAVE_C=1
	for p in cublas_bias launch_ex thrust_cg solver_hostfn; do
		libs=""
		[ $p = cublas_bias ] && libs="-lcublasLt -lcublas"
		if stale "$B/$p" "$R/$p.cu" "$R/real_common.h"; then
			# shellcheck disable=SC2086
			if ! "$NVCC" -arch=sm_90 -O2 -o "$B/$p" "$R/$p.cu" $libs >"$W/build-$p.log" 2>&1; then
				echo "real: building $p failed:"
				tail -n 20 "$W/build-$p.log"
				HAVE_C=0
			fi
		fi
	done
else
	note "C programs: no nvcc found: cublas*, launch-ex*, thrust-cg*, solver-* skipped"
fi

CUPTI_SO="" CLIB=""
if [ "${GS_REAL_COUNT:-1}" != 0 ]; then
	read -r CINC CLIB <<<"$(gs_find_cupti)"
	CINC=${GS_CUPTI_INC:-${CINC:-}}
	CLIB=${GS_CUPTI_LIB:-${CLIB:-}}
	if [ -z "$CINC" ] || [ ! -f "$CINC/cupti.h" ]; then
		note "CUPTI: no cupti.h found (GS_CUPTI_INC): no counting runs"
	else
		CUPTI_SO=$B/libgscupti.so
		src=$GS_SRC/tools/cupti/gs_cupti.c
		# cupti.h includes cuda.h: the toolkit's, or the pip package's beside it.
		if stale "$CUPTI_SO" "$src" && ! ${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -fPIC -shared \
			-fvisibility=hidden -I"$CINC" -I/usr/local/cuda/include -o "$CUPTI_SO" "$src" \
			-ldl -lpthread >"$W/build-cupti.log" 2>&1; then
			echo "real: building libgscupti.so failed:"
			tail -n 20 "$W/build-cupti.log"
			CUPTI_SO=""
		fi
		[ -z "$CUPTI_SO" ] || note "CUPTI: header $CINC, library ${CLIB:-(libcupti.so.13 from the loader)}"
	fi
fi

# --- Which frameworks are here -------------------------------------------
declare -A HAVE
VERSIONS=""
have() { # have NEED: true when the framework is usable (cached)
	local n=$1 code
	if [ -z "${HAVE[$n]:-}" ]; then
		# The import, the version (for the notes), then that it sees the GPU.
		case $n in
		torch) code='import torch; print("torch", torch.__version__); assert torch.cuda.is_available()' ;;
		transformers) code='import torch, transformers; print("transformers", transformers.__version__); assert torch.cuda.is_available()' ;;
		jax) code='import jax; print("jax", jax.__version__); assert jax.devices()[0].platform == "gpu"' ;;
		cupy) code='import cupy; print("cupy", cupy.__version__); assert cupy.cuda.runtime.getDeviceCount() > 0' ;;
		triton) code='import torch, triton; print("triton", triton.__version__); assert torch.cuda.is_available()' ;;
		timm) code='import torch, timm, torchvision; print("timm", timm.__version__); assert torch.cuda.is_available()' ;;
		torchvision) code='import torch, torchvision; print("torchvision", torchvision.__version__); assert torch.cuda.is_available()' ;;
		torchdiffeq) code='import torch, torchdiffeq; print("torchdiffeq", torchdiffeq.__version__); assert torch.cuda.is_available()' ;;
		flax) code='import jax, flax, optax; print("flax", flax.__version__); assert jax.devices()[0].platform == "gpu"' ;;
		numba) code='import numba, numpy; from numba import cuda; print("numba", numba.__version__); assert cuda.is_available()' ;;
		pyg) code='import torch, torch_geometric; print("pyg", torch_geometric.__version__); assert torch.cuda.is_available()' ;;
		lightning) code='import torch, lightning; print("lightning", lightning.__version__); assert torch.cuda.is_available()' ;;
		gpytorch) code='import torch, gpytorch; print("gpytorch", gpytorch.__version__); assert torch.cuda.is_available()' ;;
		botorch) code='import torch, gpytorch, botorch; print("botorch", botorch.__version__); assert torch.cuda.is_available()' ;;
		e3nn) code='import torch, e3nn; print("e3nn", e3nn.__version__); assert torch.cuda.is_available()' ;;
		torchaudio) code='import torch, torchaudio; print("torchaudio", torchaudio.__version__); assert torch.cuda.is_available()' ;;
		peft) code='import torch, transformers, peft; print("peft", peft.__version__); assert torch.cuda.is_available()' ;;
		sentence) code='import torch, sentence_transformers as st; print("sentence", st.__version__); assert torch.cuda.is_available()' ;;
		diffrax) code='import jax, diffrax, equinox; print("diffrax", diffrax.__version__); assert jax.devices()[0].platform == "gpu"' ;;
		numpyro) code='import jax, numpyro; print("numpyro", numpyro.__version__); assert jax.devices()[0].platform == "gpu"' ;;
		cudapy) code='import cupy; from importlib.metadata import version; print("cudapy", version("cuda-core")); assert cupy.cuda.runtime.getDeviceCount() > 0' ;;
		cuda) code='' ;;
		esac
		# A dry run needs only the imports (programs run with --device cpu).
		[ $GPU = 1 ] || code=${code%%; assert*}
		if [ "$n" = cuda ]; then
			HAVE[$n]=$([ $GPU = 1 ] && [ $HAVE_C = 1 ] && echo 1 || echo 0)
		elif timeout 120 "$PY" -c "$code" >"$W/have-$n.log" 2>&1; then
			HAVE[$n]=1
			VERSIONS="$VERSIONS${VERSIONS:+, }$(grep -m 1 "^$n " "$W/have-$n.log")"
		else
			HAVE[$n]=0
		fi
	fi
	[ "${HAVE[$n]}" = 1 ]
}

# --- Statistics helpers --------------------------------------------------
# stats_summary FILE: "launches kernels replayed coverage steady" over the
# rounds of one mode (FILE: main_stats lines, one a round): medians, the
# steady state with its spread over the rounds in points.
stats_summary() {
	"$PY" - "$1" <<'PYEOF' 2>/dev/null || echo "- - - - -"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.split() and l.split()[0] != "-"]
if not rows:
    print("- - - - -"); sys.exit(0)
med = lambda i, f: f(statistics.median(float(r[i]) for r in rows))
k = "-" if any(r[1] == "-" for r in rows) else "%d" % med(1, float)
st = [float(r[4]) for r in rows if len(r) > 4 and r[4] != "-"]
# The steady state's median and, over the rounds, its spread in points.
sts = "%.3f+-%.1f" % (statistics.median(st), 50 * (max(st) - min(st))) if st else "-"
print("%d %s %d %.3f %s" % (med(0, float), k, med(2, float), statistics.median(float(r[3]) for r in rows), sts))
PYEOF
}

# main_stats FILE...: "launches kernels replayed coverage steady" of the process
# whose counters saw the most launches ("-" for what is missing).
main_stats() {
	"$PY" - "$@" <<'PYEOF' 2>/dev/null || echo "- - - - -"
import json, sys
best = None
for f in sys.argv[1:]:
    try:
        d = json.load(open(f))
        c = d.get("counters", {})
    except Exception:
        continue
    if "launches" in c and (best is None or c["launches"] > best[0]["launches"]):
        best = (c, d)
if best is None:
    print("- - - - -"); sys.exit(0)
best, d = best
l, r = int(best["launches"]), int(best.get("replayed", 0))
k = next((best[x] for x in ("kernels", "kernel_launches", "launches_kernel") if x in best), "-")
st = d.get("coverage_steady")
print(l, k, r, "%.3f" % (r / l if l else 0.0), "-" if st is None else "%.3f" % st)
PYEOF
}

# why_stats FILE...: of the process whose counters saw the most launches,
# what kept launches from replaying: boundaries, unreadable layouts, the
# flush and mismatch reasons, sequences learned and replayed; and a second
# line, the gate's eager and replayed passes compared within that process.
why_stats() {
	"$PY" - "$@" <<'PYEOF' 2>/dev/null
import json, math, sys
best = None
for f in sys.argv[1:]:
    try:
        d = json.load(open(f))
    except Exception:
        continue
    if not isinstance(d, dict):
        continue  # a trace
    c = d.get("counters", {})
    if "launches" in c and (best is None or c["launches"] > best[0]["launches"]):
        best = (c, d)
if best is None:
    sys.exit(0)
c, d = best
top = lambda m: ", ".join("%s %d" % kv for kv in sorted(m.items(), key=lambda kv: -kv[1]) if kv[1])[:120] or "none"
seqs = d.get("sequences", [])
print("boundary_launches %s, layouts_unreadable %s, sequences %d (replayed %d, retired %d), "
      "replays %s, patches %s, variants %s (replays %s), gate eager %s; released %s, interrupted %s, "
      "idle cuts %s, shared chunks %s, refused %s, stand-ins %s; cold %s (quiet %s: %s launches; passed %s, "
      "rewarmed %s, wanted %s); graphs %s, builder %.1f ms, guesses %s (missed %s), siblings %s, learned long %s, thrifty %s; flushes: %s; mismatches: %s" % (
      c.get("boundary_launches", "-"), c.get("layouts_unreadable", "-"), len(seqs),
      sum(1 for q in seqs if q.get("replays")), sum(1 for q in seqs if q.get("state") == "retired"),
      c.get("replays", "-"), c.get("patches", "-"), c.get("variants", "-"),
      c.get("variant_replays", "-"), c.get("gate_eager", "-"), c.get("released", "-"),
      c.get("interrupted", "-"), c.get("idle_cuts", "-"), c.get("shared_chunks", "-"),
      c.get("refused", "-"), c.get("stand_ins", "-"), c.get("cold_streams", "-"), c.get("cold_quiet", "-"),
      c.get("cold_quiet_passed", "-"), c.get("cold_passed", "-"), c.get("cold_rewarmed", "-"), c.get("cold_wanted", "-"),
      c.get("graphs", "-"), c.get("build_ns", 0) / 1e6, c.get("speculated", "-"), c.get("guesses_missed", "-"),
      c.get("siblings", "-"), c.get("learned_long", "-"), c.get("thrift_on", "-"), top(d.get("flushes_by_reason", {})), top(d.get("mismatches_by_reason", {}))))
# The gate's own comparison, inside one process (immune to the machine's
# process-to-process spread): each sequence timed both ways, weighted by
# the passes seen -- what its passes cost the host all eager against all
# replayed (launches the engine passed through or learned from not in it).
# Also each sequence's own ratio weighted by the launches it covered
# (passes x length; a geometric mean): a short sequence whose passes span
# the program's work between two calls (hf-gpt2: 4 launches, 38-105 ms a
# pass) swamps the time-weighted figure and not this one.
# With GRAPHSHIM_SELFTIME the eager passes are also given less graphshim's
# own time in them (eager_host_less_own_us): eager without graphshim, as near
# as one process tells (its effect on the program's caches stays in).
te = tr = ge = gr = lw = ll = 0.0
oe = otr = olw = oll = 0.0
n = passes = on = 0
for q in seqs:
    eh, rh = q.get("eager_host_us") or 0, q.get("replay_host_us") or 0
    if eh > 0 and rh > 0:
        w = q.get("seen", 0)
        te += w * eh; tr += w * rh
        ge += w * (q.get("eager_us") or 0); gr += w * (q.get("replay_us") or 0)
        n += 1; passes += w
        lw += w * (q.get("length") or 0); ll += w * (q.get("length") or 0) * math.log(eh / rh)
        el = q.get("eager_host_less_own_us") or 0
        if el > 0:
            oe += w * el; otr += w * rh; on += 1
            olw += w * (q.get("length") or 0); oll += w * (q.get("length") or 0) * math.log(el / rh)
back = sum(1 for q in seqs if (q.get("first_trial") or {}).get("choice") == "eager" and q.get("gate") == "replay")
if n and tr > 0:
    print("in process (the gate's timed passes, %d sequence(s), %d passes): host eager/replayed %.2fx%s%s%s" % (
          n, passes, te / tr, ", GPU span %.2fx" % (ge / gr) if gr > 0 else "",
          "; per launch %.2fx" % math.exp(ll / lw) if lw > 0 else "",
          "; %d first verdict(s) of eager taken back by a later trial" % back if back else ""))
if otr > 0:
    print("in process, eager passes less graphshim's own time (GRAPHSHIM_SELFTIME, %d sequence(s)): host %.2fx; "
          "per launch %.2fx" % (on, oe / otr, math.exp(oll / olw) if olw > 0 else float("nan")))
# GRAPHSHIM_SELFTIME=1: what a launch call cost graphshim's own code, by what
# it did, and what the driver took for the calls graphshim made in it.
per = lambda ns, n: "%.0f" % (c.get(ns, 0) / c[n]) if c.get(n) else "-"
if c.get("host_held_calls") or c.get("host_eager_calls"):
    print("host ns a call (GRAPHSHIM_SELFTIME): held %s own (%d calls); eager %s own + %s driver a submission "
          "(%d calls, %d submissions); chunk's last %s own (%d calls); graph launch %s (%d); patch %s (%d)" % (
          per("host_held_own_ns", "host_held_calls"), c.get("host_held_calls", 0),
          per("host_eager_own_ns", "host_eager_calls"), per("host_submit_ns", "host_submits"),
          c.get("host_eager_calls", 0), c.get("host_submits", 0),
          per("host_chunk_own_ns", "host_chunk_calls"), c.get("host_chunk_calls", 0),
          per("host_graph_launch_ns", "host_graph_launches"), c.get("host_graph_launches", 0),
          per("host_patch_ns", "host_patches"), c.get("host_patches", 0)))
if c.get("host_slow_calls"):
    print("launch calls over 16 us of graphshim's own time (GRAPHSHIM_SELFTIME): %d, %s us each; of them eager %d, "
          "armed %d, built %d, released %d, gate timer %d, layout read %d, peers flushed %d, waited for the "
          "builder %d, lock taken %d, mismatch %d, variant copied %d, graphs taken %d, none of these %d" %
          (c["host_slow_calls"], "%.0f" % (c.get("host_slow_own_ns", 0) / 1e3 / c["host_slow_calls"]),
           c.get("host_slow_eager", 0), c.get("host_slow_arm", 0),
           c.get("host_slow_build", 0), c.get("host_slow_release", 0), c.get("host_slow_gate", 0),
           c.get("host_slow_layout", 0), c.get("host_slow_peers", 0), c.get("host_slow_wait", 0),
           c.get("host_slow_lock", 0), c.get("host_slow_mismatch", 0), c.get("host_slow_variant", 0),
           c.get("host_slow_publish", 0), c.get("host_slow_plain", 0)))
if c.get("device_updates") or c.get("device_host_patches"):
    print("device patches: %d words/grids in %d device calls (%s a launch) of %d updater runs (%d resized, %d enabled "
          "again); host patches %d "
          "(%d of function, block or shared memory), uploads %d%s" % (
          c.get("device_patched", 0), c.get("device_calls", 0), per("device_calls", "device_updates"),
          c.get("device_updates", 0), c.get("device_resizes", 0), c.get("device_reenables", 0),
          c.get("device_host_patches", 0), c.get("device_host_shape", 0), c.get("device_uploads", 0),
          "; updater set-up %s ns (%d)" % (per("host_updater_ns", "host_updaters"), c.get("host_updaters", 0))
          if c.get("host_updaters") else ""))
if c.get("drift_host_only") or c.get("drift_deferred") or c.get("drift_unarmed"):
    print("drift not built for: host only %d, deferred %d, not armed %d" % (
          c.get("drift_host_only", 0), c.get("drift_deferred", 0), c.get("drift_unarmed", 0)))
# Which nodes drift, in the sequences that replayed most (device patches take
# those whose parameters or grid drift, not their function, block or shared memory).
dr = sorted((q for q in seqs if q.get("drift_args") or q.get("drift_shape")),
            key=lambda q: -(q.get("replays") or 0) * (q.get("length") or 0))[:4]
if dr:
    print("drifting nodes (replays x length, top %d): %s" % (len(dr), "; ".join(
          "%d launches, %d replays: %d in parameters/grid, %d in function/block/shared memory, built again %d" % (
          q.get("length", 0), q.get("replays", 0), q.get("drift_args", 0), q.get("drift_shape", 0),
          q.get("rebuilds", 0)) for q in dr)))
PYEOF
}

# cupti_main FILE: "kernels graph_kernels memcpy memset dropped processes own"
# of the process that ran the most kernels (own: graphshim's own kernels, its
# device updater's, which kernels leaves out).
cupti_main() {
	[ -s "$1" ] || { echo "- - - - - 0 -"; return; }
	awk '/^gs-cupti:/ { n++; k = 0; delete v
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["kernels"] + 0 >= best + 0) { best = v["kernels"]; line = v["kernels"] " " v["graph_kernels"] " " v["memcpy"] " " v["memset"] " " v["dropped"]; own = ("own" in v) ? v["own"] : "-" } }
		END { if (n) print line, n, own; else print "- - - - - 0 -" }' "$1" 2>/dev/null
}

# --- One program ---------------------------------------------------------
# run_mode NAME MODE TAG LIMIT: one run of NAME's command in MODE; output,
# log and statistics under $W/NAME.MODE.TAG.*.  Sets RC.
run_mode() {
	local name=$1 m=$2 tag=$3 limit=$4 base=$W/$1.$2.$3
	local -a envs=() pre=() args=() cpu=() xenv=()
	TRACED=0
	local w
	read -r -a envs <<<"$C_ENV"
	read -r -a args <<<"$C_ARGS"
	case $m in
	graph)
		for w in $C_GRAPH; do
			case $w in [A-Z_]*=*) envs+=("$w") ;; *) args+=("$w") ;; esac
		done ;;
	graphshim) pre=(LD_PRELOAD="$GS_LIB") ;;
	before)
		pre=(LD_PRELOAD="${GS_REAL_EXTRA_LIB:-$GS_LIB}")
		read -r -a xenv <<<"${GS_REAL_EXTRA_ENV:-}"
		pre+=("${xenv[@]}") ;;
	before2)
		pre=(LD_PRELOAD="$GS_LIB")
		read -r -a xenv <<<"${GS_REAL_EXTRA_ENV2:-}"
		pre+=("${xenv[@]}") ;;
	esac
	if [ $GPU = 0 ] && [ "$C_CPU" != - ]; then
		read -r -a cpu <<<"$C_CPU"
		args+=("${cpu[@]}")
	fi
	case $m in graphshim | before | before2)
		read -r -a senv <<<"${GS_REAL_SHIM_ENV:-}"
		pre+=("${senv[@]}")
		pre+=(GRAPHSHIM_STATS="$base.%p.json" GRAPHSHIM_OVERWRITE=1)
		if [ "$tag" = count ] && [ "${GS_REAL_TRACE:-0}" = 1 ]; then
			pre+=(GRAPHSHIM_TRACE="$base.%p.trace.json")
		elif [ "$tag" != count ] && [ "${GS_REAL_TRACE:-0}" = timed ] &&
			{ [ "$ROUNDS" -lt 2 ] || [ "$tag" = $((ROUNDS - 1)) ]; }; then
			pre+=(GRAPHSHIM_TRACE="$base.%p.trace.json" GRAPHSHIM_TRACE_MAX=300000)
			TRACED=1
		fi ;;
	esac
	if [ "$tag" = count ]; then
		rm -f "$base.cupti"
		pre+=(CUDA_INJECTION64_PATH="$CUPTI_SO" GS_CUPTI_OUT="$base.cupti")
		[ -z "$CLIB" ] || pre+=(GS_CUPTI_LIB="$CLIB")
		[ "${GS_REAL_TIMELINE:-0}" != 1 ] || pre+=(GS_CUPTI_TIMELINE="$base.%p.gpu.txt")
	fi
	# In the background, so that a TERM (all.sh's time limit) interrupts the
	# wait at once and the trap can stop the run and print the table.
	# shellcheck disable=SC2086
	timeout -k 10 "$limit" env "${envs[@]}" "${pre[@]}" $PIN "${args[@]}" --time --out "$base.out" \
		>"$base.log" 2>&1 &
	CHILD=$!
	wait "$CHILD"
	RC=$?
	CHILD=""
	# graphshim's own lines (warnings, summaries), gathered in one log.
	grep '^graphshim:' "$base.log" 2>/dev/null | sed "s|^|$1 $2 $3: |" >>"$W/graphshim-lines.log"
}

real_one() {
	local name=$1 flags=$2 modes=$3
	local -a ml=()
	local m r i n ref="" early="" same=yes gdiff=0 rounds_done=0 w=$W/$name
	for m in $modes; do
		case " ${GS_REAL_MODES:-eager graphshim graph before} " in *" $m "*) ml+=("$m") ;; esac
	done
	[ -z "${GS_REAL_EXTRA_LIB:-}${GS_REAL_EXTRA_ENV:-}" ] || case " ${GS_REAL_MODES:-before} " in *" before "*) ml+=(before) ;; esac
	[ -z "${GS_REAL_EXTRA_ENV2:-}" ] || case " ${GS_REAL_MODES:-before2} " in *" before2 "*) ml+=(before2) ;; esac
	# A dry run has no CUDA graphs: --graph needs a GPU.
	if [ $GPU = 0 ]; then
		case " $C_GRAPH " in *" --graph "*)
			mapfile -t ml < <(printf '%s\n' "${ml[@]}" | grep -v -x graph) ;;
		esac
	fi
	n=${#ml[@]}
	[ "$n" -gt 0 ] || { note "$name: no mode selected"; return; }
	rm -f "$w".*
	echo "real: $name (${ml[*]}): ${C_ENV:+$C_ENV }$C_ARGS"
	# A compiling program's first run fills the caches, untimed (for each
	# command that compiles differently: eager's, which graphshim's and
	# before's share, and graph's).
	case ",$flags," in *,compile,*)
		for m in eager graph; do
			if [ $m = eager ]; then
				case " ${ml[*]} " in *" eager "*|*" graphshim "*|*" before "*|*" before2 "*) ;; *) continue ;; esac
			else
				case " ${ml[*]} " in *" $m "*) ;; *) continue ;; esac
			fi
			run_mode "$name" "$m" prime "$PRIME_TLIM"
			[ $RC = 0 ] || note "$name: first ($m, compiling) run failed rc=$RC: $w.$m.prime.log"
		done ;;
	esac
	for ((r = 0; r < ROUNDS; r++)); do
		if over_budget; then
			note "$name: out of time budget (GS_REAL_BUDGET=${BUDGET}s) after $r rounds"
			LEFT="$LEFT${LEFT:+ }$name"
			break
		fi
		CUR=$name CUR_ROUND=$r
		for ((i = 0; i < n; i++)); do
			m=${ml[$(((i + r) % n))]}
			run_mode "$name" "$m" "$r" "$TLIM"
			local out=$w.$m.$r.out log=$w.$m.$r.log
			if [ $RC -ne 0 ]; then
				echo "real: $name $m round $r failed (rc=$RC): $log"
				tail -n 5 "$log" | sed 's/^/    /'
				note "$name: $m round $r failed (rc=$RC$([ $RC = 124 ] && echo ", over ${TLIM}s")): $(grep -v '^\s*$' "$log" | tail -n 1 | cut -c1-150 | grep . || echo "(no output)")"
				same=no
				continue
			fi
			local t
			t=$(gs_field median_us "$log")
			# A traced run's time includes the trace: kept apart where
			# untraced rounds give the medians (GS_REAL_TRACE=timed).
			if [ "$TRACED" = 1 ] && [ "$ROUNDS" -ge 2 ]; then
				[ -z "$t" ] || echo "$t" >>"$w.$m.traced"
			else
				[ -z "$t" ] || echo "$t" >>"$w.$m.times"
			fi
			case $m in graphshim | before | before2) main_stats "$w.$m.$r".*.json >>"$w.$m.stats" ;; esac
			if [ -z "$ref" ] && [ "$m" = graph ]; then
				early="$early $out" # compared once there is a reference
				continue
			fi
			[ -n "$ref" ] || ref=$out
			if [ "$out" != "$ref" ]; then
				if ! cmp -s "$ref" "$out"; then
					echo "real: $name $m round $r: output differs from $ref"
					if [ "$m" = graph ]; then gdiff=$((gdiff + 1)); else same=no; fi
				else
					rm -f "$out"
				fi
			fi
		done
		rounds_done=$((r + 1))
	done
	# The output's digest, so that two entries meant to compute the same
	# bytes (vi-bnn and vi-bnn-fast) can be compared across the log.
	[ -z "$ref" ] || [ ! -f "$ref" ] ||
		echo "$name $(sha256sum <"$ref" | cut -c1-16) $(wc -c <"$ref")" >>"$W/output-digests.log"
	# Graph runs before the first eager run, compared now.
	for f in $early; do
		[ -n "$ref" ] || break
		if cmp -s "$ref" "$f"; then rm -f "$f"; else gdiff=$((gdiff + 1)); fi
	done

	# One counting run per mode, CUPTI injected, untimed.
	local cnt=""
	if [ -n "$CUPTI_SO" ] && ! over_budget; then
		for m in "${ml[@]}"; do
			run_mode "$name" "$m" count "$TLIM"
			if [ $RC -ne 0 ]; then
				note "$name: $m counting run failed (rc=$RC): $w.$m.count.log"
			elif [ -n "$ref" ] && ! cmp -s "$ref" "$w.$m.count.out"; then
				[ "$m" = graph ] || note "$name: $m counting run (CUPTI injected): output differs from eager's"
			fi
			grep -h '^gs-cupti: pid=[0-9]*: ' "$w.$m.count.log" 2>/dev/null | head -n 2 |
				while read -r l; do echo "$name $m: $l" >>"$W/cupti-errors.log"; done
			cnt="$cnt$m $(cupti_main "$w.$m.count.cupti")
"
		done
	elif [ -n "$CUPTI_SO" ]; then
		note "$name: no counting runs (out of time budget)"
	fi

	CUR=""
	# The row.
	local e g x ci gx ce cs launches kern rep cov steady ident
	e=$(med "$w.eager.times")
	g=$(med "$w.graphshim.times")
	x=$(med "$w.graph.times")
	ci=$(gs_interval "$w.eager.times" "$w.graphshim.times")
	[ "$ci" != - ] || ci=$(gs_ratio "$e" "$g")
	gx=$(gs_ratio "$x" "$g")
	ce=$(echo "$cnt" | awk '$1 == "eager" { print $2 }')
	cs=$(echo "$cnt" | awk '$1 == "graphshim" { print $2 }')
	[ -n "$ce" ] || ce=-
	[ -n "$cs" ] || cs=-
	[ "$ce" = - ] || [ "$cs" = - ] || [ "$ce" = "$cs" ] || cs="$cs!"
	read -r launches kern rep cov steady <<<"$(stats_summary "$w.graphshim.stats")"
	[ "$kern" = - ] || launches="$launches/$kern"
	if [ "$same" = yes ] && [ $gdiff = 0 ]; then ident=yes
	elif [ "$same" = yes ]; then ident="yes (graph differs: $gdiff)"
	else ident=NO; FAILS=$((FAILS + 1)); fi
	[ "$ce" = - ] || [ "$cs" = - ] || [ "$cs" = "$ce" ] || { ident="$ident, kernels differ"; FAILS=$((FAILS + 1)); }
	case ",$flags," in *,self,*) name="$name*" ;; esac
	ROWS="$ROWS$(printf '%-16s %6s %10s %10s %10s  %-24s %9s %9s %9s %13s %9s %6s %-11s  %s' "$name" \
		"$rounds_done" "$e" "$g" "$x" "$ci" "$gx" "$ce" "$cs" "$launches" "$rep" "$cov" "$steady" "$ident")
"
	name=${name%\*}
	echo "real: $name: eager ${e}us graphshim ${g}us graph ${x}us ($rounds_done rounds)"

	# Notes: CUPTI's counts per mode, graphshim's view, the framework's own
	# graphs, the extra build.
	if [ -z "$(echo "$cnt" | awk 'NF && $7 > 0')" ]; then
		[ -z "$cnt" ] || note "$name: CUPTI: no gs-cupti: line from the counting runs (no kernel ran, or CUPTI failed: see $w.*.count.log)"
	else
		note "$name: CUPTI (main process: kernels, in graphs, memcpy, memset, dropped; processes): $(echo "$cnt" |
			awk 'NF { printf "%s%s %s/%s/%s/%s/%s (%s)", sep, $1, $2, $3, $4, $5, $6, $7; sep = "; " }')"
		local own
		own=$(echo "$cnt" | awk 'NF && $8 != "-" && $8 > 0 { printf "%s%s %s", sep, $1, $8; sep = ", " }')
		[ -z "$own" ] || note "$name: CUPTI: graphshim's own kernels (its device updater, not counted above): $own"
		local sc cl
		sc=$(main_stats "$w".graphshim.count.*.json)
		cl=$(echo "$cnt" | awk '$1 == "graphshim" && $2 != "-" { print $2 + $4 + $5 }')
		[ -z "$cl" ] || [ "${sc%% *}" = - ] ||
			note "$name: graphshim's counting run: it saw ${sc%% *} launches; CUPTI ran $cl kernels+memcpy+memset"
	fi
	local why
	why=$(why_stats "$w".graphshim.*.json)
	[ -z "$why" ] || note "$name: graphshim (main process, last run): $(echo "$why" | head -n 1)"
	local l
	while IFS= read -r l; do
		[ -z "$l" ] || note "$name: $l"
	done <<<"$(echo "$why" | sed -n '2,$p' | grep -v '^host ns')"
	local hl
	hl=$(echo "$why" | grep '^host ns')
	[ -z "$hl" ] || note "$name: graphshim: $hl"
	local b
	for b in before before2; do
		hl=$(why_stats "$w".$b.*.json | grep -E '^(host ns|device patches|in process|launch calls over)')
		while IFS= read -r l; do
			[ -z "$l" ] || note "$name: $b: $l"
		done <<<"$hl"
	done
	# The traces of the counting run against its statistics, process by
	# process: every figure they share must agree (graphshim trace
	# summarize --check; tests/tools/t-outputs.sh does the same for kernels/).
	local t st agree=0 differ=0
	for t in "$w".graphshim.count.*.trace.json "$w".before.count.*.trace.json; do
		[ -f "$t" ] || continue
		# Its events other than launches (learning, mismatches with their
		# position and field, retirements, the gate, flushes): small, and
		# kept in real-runs.tar.gz where the whole trace is too large.
		grep -v '"cat":"launch"' "$t" >"$t.events" 2>/dev/null
		[ -x "$GS_BUILD/tools/graphshim" ] || continue
		st=${t%.trace.json}.json
		[ -f "$st" ] || continue
		if "$GS_BUILD/tools/graphshim" trace summarize "$t" --check "$st" --single >"$t.check" 2>&1; then
			agree=$((agree + 1))
			local mm
			mm=$(sed -n '/^mismatch reasons/,/^$/p' "$t.check" | sed -n '2,4p' | tr -s ' ' | tr '\n' ';')
			case $mm in "" | *none*) ;; *) note "$name: mismatches in $(basename "$t"): $mm" ;; esac
		else
			differ=$((differ + 1))
			note "$name: the trace and the statistics of $(basename "$st") disagree: $(grep -e DIFFERS -e graphshim: "$t.check" | head -n 3 | tr -s ' ' | tr '\n' ';')"
		fi
	done
	[ $((agree + differ)) = 0 ] || note "$name: trace summarize --check: $agree process(es) agree, $differ differ"
	# The timed runs' gate trials (GS_REAL_TRACE=timed), run by run.
	for t in "$w".graphshim.[0-9]*.trace.json "$w".before.[0-9]*.trace.json; do
		[ -f "$t" ] || continue
		# Its events other than launches, as for the counting runs: kept
		# when the trace itself is too large to bring back.
		grep -v '"cat":"launch"' "$t" >"$t.events" 2>/dev/null
		"$PY" "$GS_SRC/tools/gpu/gate_trials.py" "$t" >"$t.gate" 2>&1 || true
		# Where its steady state went eager: the segment length that lost most.
		if "$PY" "$GS_SRC/tools/gpu/losses.py" "$t.events" --top 40 >"$t.losses" 2>&1; then
			local lr
			lr=$(awk 'NR == 5 { printf "%s segments of %s launches (%s), %s of their %s launches replayed", $3, $1, $2, $5, $4 }' "$t.losses")
			case $(sed -n '1s/.*(\([01]\.[0-9]*\))$/\1/p' "$t.losses") in
			0.9[5-9]* | 1.*) ;;
			*) note "$name: $(basename "$t"): $(sed -n '1s/^[^:]*: //p' "$t.losses"); most lost: $lr (see $(basename "$t").losses)" ;;
			esac
		fi
		local gl
		gl=$(head -n 1 "$t.gate" | sed 's/^[^:]*: //')
		case $gl in *"first decision eager: 0; two or more decisions: 0; kept by the watch: 0") ;;
		*) note "$name: gate trials of $(basename "$t"): $gl (see $(basename "$t").gate)" ;; esac
	done
	case ",$flags," in *,self,*)
		note "$name: * the framework captures CUDA graphs itself (graphshim should leave them alone and cost nothing)" ;;
	esac
	local skips
	for m in "${ml[@]}"; do
		skips=$(gs_field cudagraph_skips "$w.$m.0.log")
		[ -z "$skips" ] || [ "$skips" = 0 ] || note "$name: $m: torch.compile skipped CUDA graphs $skips time(s)"
	done
	for b in before before2; do
		[ -f "$w.$b.times" ] || continue
		local bm bci bgi bl bk br bc bs how
		bm=$(med "$w.$b.times")
		bci=$(gs_interval "$w.eager.times" "$w.$b.times")
		[ "$bci" != - ] || bci=$(gs_ratio "$e" "$bm")
		bgi=$(gs_interval "$w.$b.times" "$w.graphshim.times")
		[ "$bgi" != - ] || bgi=$(gs_ratio "$bm" "$g")
		read -r bl bk br bc bs <<<"$(stats_summary "$w.$b.stats")"
		if [ $b = before ]; then
			how="${GS_REAL_EXTRA_LIB:+GS_REAL_EXTRA_LIB}${GS_REAL_EXTRA_ENV:+ $GS_REAL_EXTRA_ENV}"
		else
			how="$GS_REAL_EXTRA_ENV2"
		fi
		note "$name: $b ($how${GS_REAL_SHIM_ENV:+; both under $GS_REAL_SHIM_ENV}) ${bm}us; eager/$b $bci; $b/graphshim $bgi; cov $bc, steady $bs"
	done
	# Each mode's rounds in the order they ran: a process's spread here is
	# often wider than the difference of the medians (nanogpt-async's eager
	# rounds 1,238-1,961 us in one call, fifty-sixth session).
	if [ "${rounds_done:-0}" -ge 2 ]; then
		local rs="" f
		for m in eager graphshim graph before before2; do
			f="$w.$m.times"
			[ -s "$f" ] || continue
			rs="$rs${rs:+; }$m $(awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 }' "$f")"
		done
		[ -z "$rs" ] || note "$name: rounds (us, in the order run): $rs"
	fi
	local gl
	gl=$(grep -c "^$name " "$W/graphshim-lines.log" 2>/dev/null)
	[ "${gl:-0}" = 0 ] || note "$name: $gl graphshim: line(s) on stderr, first: $(grep "^$name " "$W/graphshim-lines.log" | head -n 1 | cut -c1-160)"
}

# --- The suite -----------------------------------------------------------
: >"$W/graphshim-lines.log"
: >"$W/output-digests.log"
PATS=${GS_REAL_PROGRAMS:-*}
NAMES=$(echo "$SUITE" | cut -d'|' -f1 | tr '\n' ' ')
matched=0
# Whether word $1 of GS_REAL_PROGRAMS selects entry $2 (framework $3).
selects() {
	# shellcheck disable=SC2254
	case $2 in $1) return 0 ;; esac
	# A word that names an entry (jax, numba, triton) means that entry;
	# fw:WORD always means the framework's every program.
	case " $NAMES " in *" $1 "*) return 1 ;; esac
	local p=${1#fw:}
	[ "$p" = "$3" ] && return 0
	# torch also names the programs of the libraries built on it, jax those on JAX.
	case $p:$3 in
	torch:timm | torch:torchdiffeq | torch:pyg | torch:lightning | torch:gpytorch | \
		torch:botorch | torch:e3nn | torch:torchaudio | torch:peft | torch:sentence | \
		jax:flax | jax:diffrax | jax:numpyro) return 0 ;;
	esac
	return 1
}
# The position in GS_REAL_PROGRAMS of the first word that selects entry
# $1 (framework $2), or nothing: entries run in the order they are asked for
# (the first ones get the time budget), the suite's order among those one
# word selects.
sel_index() {
	local i=0 p
	set -f # the patterns are for names, not files
	for p in $PATS; do
		i=$((i + 1))
		if selects "$p" "$1" "$2"; then
			echo $i
			break
		fi
	done
	set +f
}
SELECTED=$(n=0; while IFS='|' read -r name need rest; do
	n=$((n + 1))
	i=$(sel_index "$name" "$need")
	[ -z "$i" ] || printf '%d %d|%s|%s|%s\n' "$i" "$n" "$name" "$need" "$rest"
done <<<"$SUITE" | sort -n -k1,1 -k2,2 | cut -d' ' -f2- | cut -d'|' -f2-)
while IFS='|' read -r name need flags modes cmd graph cpu; do
	[ -n "$name" ] || continue
	matched=$((matched + 1))
	if over_budget; then
		note "$name: skipped: out of time budget (GS_REAL_BUDGET=${BUDGET}s)"
		LEFT="$LEFT${LEFT:+ }$name"
		continue
	fi
	if [ $GPU = 0 ] && [ "$cpu" = - ]; then
		note "$name: skipped: needs a GPU"
		continue
	fi
	if ! have "$need"; then
		note "$name: skipped: $need not available ($(tail -n 1 "$W/have-$need.log" 2>/dev/null | cut -c1-120))"
		echo "real: $name skipped ($need not available)"
		continue
	fi
	# The command's environment words, then the program and its arguments.
	C_ENV="" C_ARGS=""
	cmd=${cmd//\$PY/$PY}
	cmd=${cmd//\$R/$R}
	cmd=${cmd//\$B/$B}
	for w in $cmd; do
		if [ -z "$C_ARGS" ]; then
			case $w in [A-Z_]*=*) C_ENV="$C_ENV${C_ENV:+ }$w"; continue ;; esac
		fi
		C_ARGS="$C_ARGS${C_ARGS:+ }$w"
	done
	C_GRAPH=$graph
	[ "$C_GRAPH" != - ] || C_GRAPH=""
	C_CPU=$cpu
	t1=$(date +%s)
	real_one "$name" "$flags" "$modes"
	# Each program's seconds, every run of it included (compiling, counting):
	# what the next call's GS_REAL_BUDGET and GS_REAL_PROGRAMS are planned with.
	DURS="$DURS${DURS:+, }$name $(($(date +%s) - t1))"
done <<<"$SELECTED"
if [ $matched = 0 ]; then
	echo "real: GS_REAL_PROGRAMS='$PATS' matches nothing; the suite:"
	bash "$0" --list
	exit 1
fi
[ -z "$LEFT" ] || note "the rest, for another call: GS_REAL_PROGRAMS='$LEFT'"
[ -z "$VERSIONS" ] || note "frameworks: $VERSIONS (python: $("$PY" --version 2>&1))"
[ -z "$DURS" ] || note "seconds a program, all its runs: $DURS"
[ ! -s "$W/output-digests.log" ] ||
	note "outputs (sha256, first 16 hex digits, and bytes): $(tr '\n' ';' <"$W/output-digests.log" | sed 's/;$//; s/;/; /g')"
note "total: $(($(date +%s) - T0))s; statistics, logs and CUPTI counts under $W"
print_table
[ $FAILS -eq 0 ]
