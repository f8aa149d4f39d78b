"""``benchmarks/gpu.py``, the one-command device benchmark, runs end to end on a CPU (``--quick``), as it must before a
GPU session relies on it: every section reports, none fails, and ``--record`` appends the table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def gpu_benchmark(monkeypatch: pytest.MonkeyPatch):
    """The script, which is not a module of the package, loaded by path, with its folder first on ``sys.path`` as
    when it runs (for the helpers beside it)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("gpu_benchmark", ROOT / "benchmarks" / "gpu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quick_cpu_run_reports_every_section_and_records_it(gpu_benchmark, tmp_path: Path) -> None:
    import torch

    threads = torch.get_num_threads()
    record = tmp_path / "RESULTS.md"
    record.write_text("# results\n")
    try:
        rows = gpu_benchmark.main(["--device", "cpu", "--quick", "--record", str(record)])
    finally:
        torch.set_num_threads(threads)
    sections = {row.split(" | ")[0].lstrip("| ") for row in rows if row.startswith("| ") and not row.startswith("| section")}
    assert {"env", "learner", "symmetrizer", "xp"} <= sections and not any("FAILED" in row for row in rows)
    assert sum(row.startswith("| learner |") for row in rows) == 6
    text = record.read_text()
    assert text.startswith("# results\n") and "| env | HanabiBatch v0_belief, 64 games |" in text


def test_a_device_that_cannot_be_used_is_refused_by_name(gpu_benchmark, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        gpu_benchmark.main(["--device", "nonsense"])
    assert info.value.code == 2 and "--device 'nonsense' cannot be used" in capsys.readouterr().err
