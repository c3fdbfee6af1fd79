#!/usr/bin/env bash
# offline_install.sh: runs ON THE AIR-GAPPED GPU NODE. scripts/offline_bundle.py copies it into every part
# folder (.whl/p1, .whl/p2, ...), so whichever part arrives first brings it.
#   bash offline_install.sh stash DIR  copy a part folder (DIR = .whl/pN) to $PARTS_DIR; print the node's facts
#   bash offline_install.sh verify     all parts present in $PARTS_DIR and their SHA256SUMS match
#   bash offline_install.sh install    verify, unpack the tree to $SITE, import-check $CHECK_IMPORTS
#   bash offline_install.sh smoke      vllm.LLM on a random-weight Qwen1.5-0.5B (load_format=dummy), offline
#                                      tokenizer (SMOKE_BACKEND=TRITON_ATTN picks another attention backend)
#   bash offline_install.sh facts      the node's facts only
# Then: export PYTHONPATH=$SITE:<the repo>  (defaults: PARTS_DIR=/tmp/gpuparts SITE=/tmp/site PY=python3)
# Exit codes: 2 usage, 3 missing parts, 4 checksum mismatch, 5 unpack failed, 6 import failed.
set -uo pipefail
PARTS_DIR=${PARTS_DIR:-/tmp/gpuparts}
SITE=${SITE:-/tmp/site}
PY=${PY:-python3}
CHECK_IMPORTS=${CHECK_IMPORTS:-torch vllm vllm.entrypoints.llm ray ray.data ray.data.llm}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 RAY_DISABLE_USAGE_STATS=1
export PYTHONUNBUFFERED=1

facts() {
  echo "== facts"; uname -r; ldd --version 2>&1 | head -1; nvidia-smi -L 2>&1 | head -2
  "$PY" -VV; df -h /tmp /dev/shm 2>/dev/null | tail -n +2; command -v nvcc gcc xz | tr '\n' ' '; echo
  "$PY" - <<'EOF'
import importlib.metadata as md
names = ("torch triton transformers tokenizers huggingface-hub numpy numba llvmlite pyarrow pandas protobuf "
         "typing_extensions anyio setuptools pillow opencv-python-headless aiohttp multidict cuda-bindings "
         "nvidia-ml-py pydantic fastapi psutil filelock msgpack cloudpickle").split()
out = []
for n in names:
    try:
        out.append(f"{n}={md.version(n)}")
    except md.PackageNotFoundError:
        out.append(f"{n}=-")
print(" ".join(out))
try:
    import numba, numpy
    print("numba import ok", numba.__version__, numpy.__version__)
except Exception as e:  # vLLM imports numba: it must load with the image's numpy
    print("numba import FAILED:", type(e).__name__, e)
EOF
}

verify() {
  [ -f "$PARTS_DIR/SHA256SUMS" ] || { echo "NO SHA256SUMS in $PARTS_DIR (stash a part first)"; return 3; }
  local missing bad
  missing=$(cd "$PARTS_DIR" && awk '{print $2}' SHA256SUMS | while read -r f; do [ -f "$f" ] || echo "$f"; done)
  [ -z "$missing" ] || { echo "MISSING PARTS:" $missing "(resend them)"; return 3; }
  bad=$(cd "$PARTS_DIR" && sha256sum -c SHA256SUMS 2>/dev/null | grep -v ': OK$' | cut -d: -f1)
  [ -z "$bad" ] || { echo "CHECKSUM MISMATCH:" $bad "(resend them)"; return 4; }
  echo "parts OK: $(wc -l < "$PARTS_DIR/SHA256SUMS") checked in $PARTS_DIR"
}

unpack() {
  rm -rf "$SITE" "$SITE.unpack" && mkdir -p "$SITE.unpack" || return 5
  (cd "$PARTS_DIR" && cat $(awk '{print $2}' SHA256SUMS | sort)) | "$PY" -c '
import lzma, sys, tarfile
kw = {"filter": "tar"} if hasattr(tarfile, "data_filter") else {}
with tarfile.open(fileobj=lzma.LZMAFile(sys.stdin.buffer), mode="r|") as t:
    t.extractall(sys.argv[1], **kw)
' "$SITE.unpack" && mv "$SITE.unpack/site" "$SITE" && rmdir "$SITE.unpack"
}

import_check() {
  # shellcheck disable=SC2086  # the module list is split on purpose
  PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} "$PY" - $CHECK_IMPORTS <<'EOF'
import importlib, sys, time
t = time.time()
mods = {m: importlib.import_module(m) for m in sys.argv[1:]}
line = " ".join(f"{m}={getattr(mod, '__version__', 'ok')}" for m, mod in mods.items() if "." not in m)
if "torch" in mods:
    line += f" cuda={mods['torch'].cuda.is_available()}"
if "vllm" in mods:
    try:
        import vllm.vllm_flash_attn.flash_attn_interface as fa
        line += f" FA3={fa.FA3_AVAILABLE}"
    except Exception as e:  # kernels load only where CUDA is
        line += f" FA3=? ({type(e).__name__})"
print(f"imports OK: {line} ({time.time() - t:.1f} s)")
EOF
}

fallbacks() {  # a wheel shipped beside the tree replaces its pinned version where that one does not load
  local w
  for w in "$PARTS_DIR"/llguidance-*.whl; do
    [ -f "$w" ] || continue
    PYTHONPATH=$SITE "$PY" -c "import llguidance" 2>/dev/null && continue
    echo "llguidance does not load here (glibc < 2.31?): installing $(basename "$w")"
    rm -rf "$SITE"/llguidance "$SITE"/llguidance-*.dist-info
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$w"
  done
}

case "${1:-}" in
stash)
  [ -d "${2:-}" ] || { echo "usage: $0 stash DIR"; exit 2; }
  mkdir -p "$PARTS_DIR" && cp -f "$2"/* "$PARTS_DIR"/ && ls -l "$PARTS_DIR" && facts ;;
verify)
  verify ;;
install)
  t0=$(date +%s)
  verify || exit $?
  unpack || { echo "UNPACK FAILED"; exit 5; }
  echo "unpacked $(du -sm "$SITE" | cut -f1) MiB to $SITE in $(( $(date +%s) - t0 )) s"
  fallbacks
  import_check || { echo "IMPORT FAILED"; exit 6; }
  echo "install done in $(( $(date +%s) - t0 )) s; now: export PYTHONPATH=$SITE:\$PWD" ;;
facts)
  facts ;;
smoke)
  cat > /tmp/vllm_smoke.py <<'EOF'
import json, os, random, time


def main():
    t0 = time.time()
    root = "/tmp/qwen05"
    md, td = root + "/model", root + "/tokenizer"
    os.makedirs(md, exist_ok=True)
    # Qwen1.5-0.5B (xFinder-qwen1505) architecture; weights are vLLM's random "dummy" ones: nothing is read
    cfg = dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", hidden_size=1024, intermediate_size=2816,
               num_hidden_layers=24, num_attention_heads=16, num_key_value_heads=16, vocab_size=151936,
               max_position_embeddings=32768, rope_theta=1e6, rms_norm_eps=1e-6, tie_word_embeddings=True,
               hidden_act="silu", torch_dtype="bfloat16", bos_token_id=151643, eos_token_id=151643,
               use_sliding_window=False, sliding_window=32768, max_window_layers=21)
    json.dump(cfg, open(md + "/config.json", "w"))
    json.dump({"bos_token_id": 151643, "eos_token_id": 151643}, open(md + "/generation_config.json", "w"))
    # Offline tokenizer: WordLevel over exactly the model's vocabulary (token i = "t<i>_"), as in
    # benchmarks/gpu_bench.py; in its own folder (no config.json) so transformers does not pick Qwen2Tokenizer.
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    def w(i):
        return f"t{i}_"

    tok = Tokenizer(models.WordLevel(vocab={w(i): i for i in range(cfg["vocab_size"])}, unk_token=w(0)))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token=w(0), bos_token=w(151643), eos_token=w(151643),
                            model_max_length=2048).save_pretrained(td)
    from vllm import LLM, SamplingParams

    extra = {"attention_backend": os.environ["SMOKE_BACKEND"]} if os.environ.get("SMOKE_BACKEND") else {}
    t1 = time.time()
    llm = LLM(model=md, tokenizer=td, load_format="dummy", dtype="bfloat16", max_model_len=2048,
              enforce_eager=True, enable_prefix_caching=True, gpu_memory_utilization=0.5, **extra)
    t2 = time.time()
    random.seed(0)
    prompts = [" ".join(w(random.randrange(1000, 150000)) for _ in range(600)) for _ in range(256)]
    outs = llm.generate(prompts, SamplingParams(max_tokens=8, ignore_eos=True, temperature=0))
    t3 = time.time()
    assert len(outs) == 256 and all(len(o.outputs[0].token_ids) == 8 for o in outs)
    print("SMOKE OK %s: LLM() %.1fs, 256 x 600-token prompts x 8 new tokens in %.2fs, total %.1fs"
          % (extra or "default backend", t2 - t1, t3 - t2, t3 - t0), flush=True)


if __name__ == "__main__":
    main()
EOF
  PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} "$PY" /tmp/vllm_smoke.py ;;
*) echo "usage: $0 stash DIR | verify | install | smoke | facts"; exit 2 ;;
esac
