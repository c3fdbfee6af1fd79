#!/usr/bin/env bash
# GPU benchmark, ready to run on one H100/H200 (no network; about 6-8 minutes):
#   random-weight xFinder-qwen1505 (Qwen1.5-0.5B) and xFinder-llama38it (Llama-3-8B) architectures,
#   ~600-token prompts (tail to 2,048), 8 output tokens, arrival vs question-grouped order, bare vLLM
#   and the job's vLLM stage; prints records/s, prompt tokens/s and the share of the bf16 roofline.
# Needs the GPU install (`make install` on a GPU machine puts vllm into .venv). Extra arguments go to
# benchmarks/gpu_bench.py (e.g. --models xFinder-qwen1505, --records 8192, --peak-tflops 989).
# `bash benchmarks/gpu_bench.sh --dry-run` runs the same code on the vLLM CPU build, tiny models.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 RAY_DISABLE_USAGE_STATS=1
LIMIT=500   # hard stop (s); gpu_bench.py starts no new step after 450 s and reports what finished
case " $* " in
  *" --dry-run "*) LIMIT=3900 ;;
  *) "$PY" -c 'import torch, vllm, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
       || { echo "gpu_bench.sh: needs a CUDA GPU and the GPU vllm build in $PY (or pass --dry-run)" >&2; exit 2; } ;;
esac
# Ray (the stage path) stays on loopback where a private network namespace is available.
exec timeout "$LIMIT" scripts/loopback.sh "$PY" benchmarks/gpu_bench.py "$@"
