# Everyday commands; the README shows the same ones.
.PHONY: setup test test-slow demo bench

setup:
	pip install torch==2.13.0
	CMAKE_POLICY_VERSION_MINIMUM=3.5 pip install -e ".[dev,hanabi]"

test:
	python -m pytest -q -n 2

test-slow:
	python -m pytest -q -n 2 --runslow

demo:
	eqc lever --seeds 8 --out runs/lever

bench:
	python benchmarks/symmetrizer.py
	python benchmarks/batched_hanabi.py
	python benchmarks/hle_throughput.py
