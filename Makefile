# Bloom: `make run` (embedded default: SQLite, filesystem broker, the model server as a process of its own) and `make test` (PostgreSQL + pgvector + Redis).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
# The production-like services the suite uses (see scripts/prepare_services.sh).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/bloom
TEST_BROKER_URL ?= redis://127.0.0.1:6379/0
export HF_HUB_OFFLINE := 1

# `make run` builds only what chat needs before the server starts (models-chat); the Procfile's
# `prepare` builds the rest in the background (GLiNER, the int8 query graph; docs/model-runtime.md).
.PHONY: install models models-chat services migrate seed run test test-postgres test-embedded bench lint fmt clean

$(VENV)/.installed: requirements.txt requirements-dev.txt scripts/install_llama_cpp.sh
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PIP) install -q --upgrade pip
	@# llama.cpp first, built with the project's CPU flags (docs/model-runtime.md), so that
	@# nothing below lets pip build it with its native defaults.
	VENV=$(VENV) scripts/install_llama_cpp.sh
	@# torch: the CPU build lies on disk for Python 3.11 (docs/model-runtime.md)
	$(PIP) install -q -r requirements-dev.txt
	@touch $@

# The llama.cpp check runs on every install: a venv carried to a machine with another CPU is
# rebuilt for it (the build stamp names the flags, and the flags follow the CPU).
install: $(VENV)/.installed
	@VENV=$(VENV) scripts/install_llama_cpp.sh

models: install
	$(PY) manage.py bloom_models

models-chat: install
	$(PY) manage.py bloom_models --for-chat

services:
	@scripts/prepare_services.sh

migrate: install
	$(PY) manage.py migrate --noinput

seed: migrate
	$(PY) manage.py seed_demo

run: install models-chat migrate seed
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py preflight
	@echo ""
	@echo "  Bloom is starting:"
	@echo "    chat page   http://$(HOST):$(PORT)/chat/"
	@echo "    admin       http://$(HOST):$(PORT)/admin/"
	@echo "    API docs    http://$(HOST):$(PORT)/api/docs/"
	@echo "    health      http://$(HOST):$(PORT)/healthz"
	@echo ""
	HOST=$(HOST) PORT=$(PORT) $(PY) scripts/supervise.py Procfile

test: install services models lint test-postgres test-embedded

# The full suite against PostgreSQL + pgvector with a Redis broker.
test-postgres:
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) \
	  $(VENV)/bin/pytest -m "not embedded" $(PYTEST_ARGS)

# A smoke suite against the embedded default (SQLite + filesystem broker).
test-embedded:
	env -u DATABASE_URL -u CELERY_BROKER_URL BLOOM_VAR_DIR=$(CURDIR)/var/test-embedded \
	  $(VENV)/bin/pytest -m embedded $(PYTEST_ARGS)

bench: install services models
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) $(PY) bench/run.py $(BENCH_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache

fmt: install
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf var/broker var/test-embedded
