#!/usr/bin/env bash
# offline_bundle_node_venv.sh VENV [PYTHON]: a CPU stand-in for the H200 node's image, to check an offline
# bundle without a GPU: Python 3.12 with torch 2.11.0 (the registry's CUDA 13 build: PyPI serves no CPU build
# of torch 2.11), the CUDA libraries torch needs to import, and the packages the image has (transformers,
# numpy, numba, pyarrow, ...), but neither vLLM nor Ray: those come from the bundle's tree on PYTHONPATH.
# Several GB of downloads. Used by tests/cpu/test_offline_bundle.py (XFINDER_BUNDLE_TEST=1).
set -euo pipefail
VENV=${1:?usage: $0 VENV [PYTHON]}
PYTHON=${2:-python3.12}
export PIP_CONSTRAINT= PIP_DISABLE_PIP_VERSION_CHECK=1
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install -q)
# torch without its exact pins: the registry lacks nvidia-cudnn-cu13==9.19.0.56; a newer cuDNN 9 has the same
# soname, which is all a CPU import needs.
"${pip[@]}" --no-deps torch==2.11.0 triton==3.6.0
"${pip[@]}" filelock 'typing-extensions>=4.10.0' 'setuptools<81,>=77.0.3' 'sympy>=1.13.3' 'networkx>=2.5.1' \
  jinja2 'fsspec>=0.8.5' \
  'cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.2' \
  'cuda-bindings<14,>=13.0.3' nvidia-cudnn-cu13 nvidia-cusparselt-cu13 nvidia-nccl-cu13 nvidia-nvshmem-cu13 \
  'transformers>=5.5.3,<6' tokenizers safetensors sentencepiece regex psutil requests tqdm py-cpuinfo \
  protobuf aiohttp prometheus_client pillow pyyaml cloudpickle einops numba==0.65.0 numpy pandas pyarrow \
  click msgpack packaging six nvidia-ml-py
"$VENV/bin/python" -c "import torch; print('torch', torch.__version__, 'cuda available:', torch.cuda.is_available())"
