"""Ray addresses of seed pools: a dead or missing cluster is a one-line ValueError before any work, never a hang.

No test starts a Ray cluster: "running" clusters are plain listening sockets, and Ray's address file is
faked under ``RAY_TMPDIR`` (the real ``/tmp/ray`` is never read or written).
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import eqc.domains.hanabi.training.pool as pool
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.pool import check_ray_address, train_pool

START = "start one with `ray start --head` or leave out --ray"


@pytest.fixture
def ray_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private Ray temp dir (``RAY_TMPDIR``) with no ``RAY_ADDRESS``: Ray's address file is ``<it>/ray/ray_current_cluster``."""
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return tmp_path


def record_address(ray_tmp: Path, address: str) -> Path:
    """Write ``address`` where ``ray start`` records the address of its cluster."""
    file = ray_tmp / "ray" / "ray_current_cluster"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(address + "\n")
    return file


@pytest.fixture
def dead_address() -> str:
    """host:port of a local port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def http2_server(reply: bytes) -> Iterator[str]:
    """host:port of a loopback server that reads what a client sends and answers ``reply`` to each connection."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(1.0)
                try:
                    connection.recv(64)
                    connection.sendall(reply)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        server.close()


@pytest.fixture
def live_address() -> Iterator[str]:
    """host:port of a loopback server answering the HTTP/2 preface with a SETTINGS frame, as a Ray head's GCS (gRPC) does."""
    yield from http2_server(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00" + b"\x00\x03\x00\x00\x00\x64")


@pytest.fixture
def silent_address() -> Iterator[str]:
    """host:port of a loopback socket that accepts TCP connections and never answers (not Ray)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"127.0.0.1:{server.getsockname()[1]}"


def test_auto_without_any_cluster(ray_tmp: Path) -> None:
    with pytest.raises(ValueError) as info:
        check_ray_address("auto")
    assert str(info.value) == f"'auto' found no running Ray cluster on this machine; {START}"


def test_auto_with_a_stale_address_file(ray_tmp: Path, dead_address: str) -> None:
    """The file outlives its cluster: ray.init("auto") would retry the dead address for minutes."""
    file = record_address(ray_tmp, dead_address)
    with pytest.raises(ValueError) as info:
        check_ray_address("auto", timeout=1.0)
    assert str(info.value) == f"no Ray cluster is running at {dead_address} (stale address in {file}); {START}"
    assert "\n" not in str(info.value)


def test_auto_with_a_running_cluster(ray_tmp: Path, live_address: str) -> None:
    record_address(ray_tmp, live_address)
    check_ray_address("auto", timeout=1.0)


def test_auto_prefers_ray_address_as_ray_does(ray_tmp: Path, live_address: str, dead_address: str, monkeypatch: pytest.MonkeyPatch) -> None:
    record_address(ray_tmp, live_address)
    monkeypatch.setenv("RAY_ADDRESS", dead_address)
    with pytest.raises(ValueError, match=re.escape(f"no Ray cluster is running at {dead_address} (address from RAY_ADDRESS)")):
        check_ray_address("auto", timeout=1.0)
    monkeypatch.setenv("RAY_ADDRESS", "")  # empty counts as unset, for Ray too
    check_ray_address("auto", timeout=1.0)


def test_auto_with_a_garbled_address_file(ray_tmp: Path) -> None:
    file = record_address(ray_tmp, "not an address")
    with pytest.raises(ValueError, match=re.escape(f"must be 'auto' or host:port, got 'not an address' from {file}")):
        check_ray_address("auto")


def test_explicit_addresses(dead_address: str, live_address: str) -> None:
    with pytest.raises(ValueError, match="must be 'auto' or host:port, got 'nonsense'"):
        check_ray_address("nonsense")
    with pytest.raises(ValueError, match=re.escape(f"cannot reach a Ray cluster at '{dead_address}'")):
        check_ray_address(dead_address, timeout=1.0)
    check_ray_address(live_address, timeout=1.0)
    check_ray_address(f"ray://{live_address}", timeout=1.0)


def test_a_port_that_accepts_tcp_but_is_not_ray_is_refused(silent_address: str) -> None:
    """Before, it passed the check and ray.init retried "Failed to connect to GCS" until killed."""
    with pytest.raises(ValueError, match=re.escape(f"'{silent_address}' accepts connections but is not a Ray cluster: it did "
                                                   "not answer gRPC's HTTP/2 handshake within 0.5 s")):
        check_ray_address(silent_address, timeout=0.5)
    for reply in (b"HTTP/1.1 400 Bad Request\r\n\r\n", b""):  # an HTTP/1 server; one that closes at once
        address = http2_server(reply)
        with pytest.raises(ValueError, match="accepts connections but is not a Ray cluster"):
            check_ray_address(next(address), timeout=0.5)
        address.close()


def test_the_address_file_is_where_ray_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray_utils = pytest.importorskip("ray._common.utils")
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    assert pool._ray_address_file() == Path(ray_utils.get_ray_address_file(None))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    assert pool._ray_address_file() == Path(ray_utils.get_ray_address_file(None))
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "ray_tmp"))
    assert pool._ray_address_file() == Path(ray_utils.get_ray_address_file(None)) == tmp_path / "ray_tmp" / "ray" / "ray_current_cluster"


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Refuse training; record ``ray.init``'s arguments instead of starting or joining a cluster."""
    ray = pytest.importorskip("ray")
    calls: list[dict] = []

    def fake_init(**kwargs: object) -> None:
        calls.append(kwargs)
        raise RuntimeError("ray.init reached")

    def refuse(*args: object) -> None:
        raise AssertionError("training started")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", fake_init)
    monkeypatch.setattr(pool, "_train_seed", refuse)
    return calls


def test_pool_refuses_a_stale_address_before_ray_init(ray_tmp: Path, dead_address: str, no_work: list[dict]) -> None:
    file = record_address(ray_tmp, dead_address)
    with pytest.raises(ValueError, match=re.escape(f"stale address in {file}")):
        train_pool({s: TrainConfig() for s in (0,)}, ray_tmp / "pool", ray_address="auto", log=lambda _: None)
    assert no_work == []


def test_pool_without_an_address_starts_a_local_instance_despite_a_stale_file(
    ray_tmp: Path, dead_address: str, no_work: list[dict]
) -> None:
    """ray.init(address=None) would join the recorded (dead) cluster; "local" always starts a new instance."""
    record_address(ray_tmp, dead_address)
    with pytest.raises(RuntimeError, match=r"ray\.init reached"):
        train_pool({s: TrainConfig() for s in (0,)}, ray_tmp / "pool", use_ray=True, log=lambda _: None)
    assert [call["address"] for call in no_work] == ["local"]
