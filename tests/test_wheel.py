"""An installed wheel, used outside the repository: its configs ship with it and reproduce runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_outside_the_repository_reproduces_a_smoke_table(tmp_path: Path) -> None:
    """Build the wheel, install it (without dependencies) into a fresh virtualenv that sees this one's packages
    (a ``.pth`` line: no editable eqc), and run ``eqc hanabi reproduce table1 --scale smoke`` from a
    directory that is not the repository."""
    import site

    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    wheel = next(dist.glob("eqc-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", purelib, str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run([str(python), "-c", "import eqc; print(eqc.__file__)"], capture_output=True, text=True, cwd=elsewhere)
    assert str(venv) in where.stdout, where.stdout  # the wheel's eqc, not the repository's
    run = subprocess.run([str(python), "-m", "eqc.cli", "hanabi", "reproduce", "table1", "--scale", "smoke", "--out", "out", "--no-ray"],
                         capture_output=True, text=True, cwd=elsewhere, timeout=900, env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "| D10-equivariant |" in (elsewhere / "out" / "table1.md").read_text()
