# Memory Steward — `make demo` runs the product, `make test` runs the whole suite.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
PG_URL ?= postgres://postgres@127.0.0.1:5432/steward
HOST ?= 127.0.0.1
PORT ?= 8000
# A CPU build of torch first, so the embedding model's dependencies do not pull a CUDA one.
TORCH ?= torch==2.13.0

.PHONY: demo test test-sqlite test-postgres test-pgvector lint install serve clean-db bench

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet ".[dev,embeddings,rerank]"
	touch $@

install: $(VENV)/.installed

## Migrate the SQLite database, load the demo Memory and serve it on http://127.0.0.1:8000
## (with the outbox on: the mail the demo sends is listed at /outbox/, its links to this server)
demo: export STEWARD_OUTBOX ?= true
demo: export STEWARD_PUBLIC_URL ?= http://$(HOST):$(PORT)
demo: install
	$(PY) manage.py migrate --verbosity 0
	$(PY) manage.py load_demo --base-url http://$(HOST):$(PORT)
	$(PY) manage.py rebuild_projection --vectors
	$(PY) manage.py runserver --insecure $(HOST):$(PORT)

## The whole suite on SQLite, then on PostgreSQL when DATABASE_URL points at one or CI is set
## (and, under CI, the vector index tests on a PostgreSQL with pgvector)
test: install
	$(MAKE) --no-print-directory test-sqlite
	@if [ -n "$$CI" ] || echo "$$DATABASE_URL" | grep -q '^postgres'; then \
		$(MAKE) --no-print-directory test-postgres; \
	else \
		echo "PostgreSQL run skipped: set DATABASE_URL=postgres://... (or CI=1) to run it too."; \
	fi
	@if [ -n "$$CI" ]; then $(MAKE) --no-print-directory test-pgvector; fi

test-sqlite: install
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) -m pytest -p no:cacheprovider -q

test-postgres: install
	@url="$${DATABASE_URL:-$(PG_URL)}"; case "$$url" in postgres*) ;; *) url="$(PG_URL)";; esac; \
	echo "== PostgreSQL: $$url"; \
	$(PY) -c "import sys, psycopg; psycopg.connect(sys.argv[1].replace('/steward', '/postgres'), connect_timeout=5).close()" "$$url" \
		|| { echo "PostgreSQL is unreachable at $$url"; exit 1; }; \
	DATABASE_URL="$$url" $(PY) -m pytest -p no:cacheprovider -q

## The vector index tests on a PostgreSQL with pgvector (started beside the system one)
PGVECTOR_TESTS ?= tests/memory/test_semantic_recall.py tests/memory/test_search_vector.py \
	tests/memory/test_vector_worker.py tests/governance/test_semantic.py \
	tests/memory/test_vector_isolation.py tests/memory/test_batch_import.py \
	tests/memory/test_other_scripts.py
test-pgvector: install
	@url="$$(PY=$(PY) .ci/pgvector-server)"; echo "== PostgreSQL with pgvector: $$url"; \
	DATABASE_URL="$$url" $(PY) -m pytest -p no:cacheprovider -q $(PGVECTOR_TESTS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .

## The quick benchmark set (figures in docs/benchmarks.md; each script's --help has the full sizes)
BENCH_PORT ?= 8520
bench: install
	@echo "== bench/search_bench.py --sizes 10000 --queries 100"; $(PY) bench/search_bench.py --sizes 10000 --queries 100
	@echo "== bench/inbox_bench.py --sizes 100,10000 --repeat 10"; $(PY) bench/inbox_bench.py --sizes 100,10000 --repeat 10
	@echo "== bench/audit_export_bench.py --events 20000"; $(PY) bench/audit_export_bench.py --events 20000
	@echo "== bench/maintenance_eval.py"; $(PY) bench/maintenance_eval.py
	@echo "== bench/mcp_bench.py --rounds 100"; $(PY) bench/mcp_bench.py --rounds 100 --port $(BENCH_PORT)
