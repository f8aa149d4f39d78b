"""`eqc hanabi pool --ray auto` with no cluster or a stale address file: exit 2 with one line, before any work."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from eqc.cli import main


@pytest.mark.parametrize("stale", [False, True])
def test_ray_auto_without_a_live_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stale: bool
) -> None:
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))  # Ray's address file is <RAY_TMPDIR>/ray/ray_current_cluster
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    if stale:
        with socket.socket() as sock:  # a port nothing listens on
            sock.bind(("127.0.0.1", 0))
            address = f"127.0.0.1:{sock.getsockname()[1]}"
        (tmp_path / "ray").mkdir()
        (tmp_path / "ray" / "ray_current_cluster").write_text(address)
    with pytest.raises(SystemExit) as info:
        main(["hanabi", "pool", "--config", "vdn_cpu", "--seeds", "0", "--out", str(tmp_path / "pool"), "--ray", "auto"])
    error = capsys.readouterr().err.splitlines()[-1]
    assert info.value.code == 2 and error.startswith("eqc hanabi pool: error: argument --ray: ")
    file = tmp_path / "ray" / "ray_current_cluster"
    expected = f"no Ray cluster is running at {address} (stale address in {file})" if stale else "'auto' found no"
    assert expected in error and "ray start --head" in error
    assert not (tmp_path / "pool").exists()


def test_ray_at_a_port_that_is_not_ray_is_refused_before_out_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A loopback listener that accepts TCP but never speaks gRPC: before, the pool directory was created and Ray hung."""
    pytest.importorskip("ray")
    with socket.create_server(("127.0.0.1", 0)) as server:
        address = f"127.0.0.1:{server.getsockname()[1]}"
        with pytest.raises(SystemExit) as info:
            main(["hanabi", "pool", "--config", "vdn_cpu", "--seeds", "0", "--out", str(tmp_path / "pool"), "--ray", address])
    error = capsys.readouterr().err.splitlines()[-1]
    assert info.value.code == 2 and f"argument --ray: '{address}' accepts connections but is not a Ray cluster" in error
    assert not (tmp_path / "pool").exists()
