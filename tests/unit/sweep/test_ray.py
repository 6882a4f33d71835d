"""``npuplan sweep --ray``: a Ray cluster on 127.0.0.1 gives the same CSV as planning locally.

Marked ``ray`` (deselect with ``-m 'not ray'``); skipped when Ray is not installed. The cluster is a
``ray start --head --block`` process of this test's own, ended by its process group id.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from npuplan.cli import main

SRC = Path(__file__).resolve().parents[3] / "src"
RAY_MISSING = importlib.util.find_spec("ray") is None
AXES = ["--accelerator-config", "ethos-u55-64,ethos-u65-256", "--optimise", "Performance,Size",
        "--arena-cache-size", "32k,default"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ray_env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled",
            "RAY_USAGE_STATS_ENABLED": "0"}


def _wait_for_port(port: int, head: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if head.poll() is not None:
            raise RuntimeError(f"ray start exited with status {head.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"no Ray head on 127.0.0.1:{port} after {seconds} s")


def _stop(head: subprocess.Popen) -> None:
    """End the head: ``ray start --block`` stops the Ray processes it started on SIGINT; whatever
    of its process group is left after a grace period is killed."""
    for sig, wait in ((signal.SIGINT, 15), (signal.SIGKILL, 10)):
        if head.poll() is None:
            os.killpg(head.pid, sig) if sig == signal.SIGKILL else head.send_signal(sig)
            try:
                head.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
    try:
        os.killpg(head.pid, signal.SIGKILL)  # children the head did not stop
    except ProcessLookupError:
        pass


@pytest.mark.ray
@pytest.mark.skipif(RAY_MISSING, reason='Ray is not installed: pip install "npuplan[ray]"')
def test_ray_cluster_gives_the_same_rows_as_local(tmp_path, capsys, data_dir):
    models = [str(data_dir / "ds_cnn_kws.tflite"), str(data_dir / "resnet8_cifar.tflite")]
    assert main(["sweep", *models, *AXES, "--output-dir", str(tmp_path / "local"), "--quiet"]) == 0
    capsys.readouterr()
    ray = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    port = _free_port()
    # A temp folder of the head's own (short: Ray's socket paths must fit 107 bytes): its cluster
    # file goes there, not in /tmp/ray where a later ray.init() would find it after the head is gone.
    folder = tempfile.mkdtemp(prefix="rayt-", dir="/tmp")
    head = subprocess.Popen(
        [ray, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=1",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={folder}"],
        env=_ray_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for_port(port, head, 60)
        swept = subprocess.run(
            [sys.executable, "-m", "npuplan", "sweep", *models, *AXES, "--output-dir", str(tmp_path / "ray"),
             "--ray", f"127.0.0.1:{port}", "--quiet"],
            env=_ray_env(), capture_output=True, text=True, timeout=120)
    finally:
        _stop(head)
        shutil.rmtree(folder, ignore_errors=True)
    assert swept.returncode == 0, swept.stderr
    assert (tmp_path / "ray" / "sweep.csv").read_text() == (tmp_path / "local" / "sweep.csv").read_text()


def test_without_ray_the_error_names_the_extra(tmp_path, capsys, monkeypatch, ds_cnn):
    import builtins

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    status = main(["sweep", str(ds_cnn), "--output-dir", str(tmp_path / "out"), "--ray", "--quiet"])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and 'pip install "npuplan[ray]"' in err
    assert not (tmp_path / "out").exists()


def test_a_dead_address_is_one_line_naming_it(tmp_path, capsys, ds_cnn):
    """Nothing listens at the address: one line naming it within the connect timeout (Ray's own
    connect would retry for minutes), status 1, nothing written. Ray itself is not needed."""
    address = f"127.0.0.1:{_free_port()}"
    status = main(["sweep", str(ds_cnn), "--output-dir", str(tmp_path / "out"), f"--ray={address}", "--quiet"])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and f"cannot reach Ray at '{address}'" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("address", ["auto", "host:port"])
def test_an_address_ray_would_guess_or_cannot_parse_is_refused(tmp_path, capsys, ds_cnn, address):
    status = main(["sweep", str(ds_cnn), "--output-dir", str(tmp_path / "out"), f"--ray={address}", "--quiet"])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and f"--ray {address}" in err


@pytest.mark.ray
@pytest.mark.skipif(RAY_MISSING, reason='Ray is not installed: pip install "npuplan[ray]"')
def test_local_ray_ignores_a_dead_cluster_and_leaves_nothing(tmp_path, data_dir):
    """``--ray`` alone starts a private Ray even when ``RAY_ADDRESS`` (or a cluster file a test left
    in /tmp/ray) names a dead cluster, finishes, and removes its temp folder."""
    before = set(Path(tempfile.gettempdir()).glob("npuplan-ray-*"))
    env = {**_ray_env(), "RAY_ADDRESS": f"127.0.0.1:{_free_port()}"}
    swept = subprocess.run(
        [sys.executable, "-m", "npuplan", "sweep", str(data_dir / "ds_cnn_kws.tflite"), "--accelerator-config",
         "ethos-u55-64,ethos-u55-128", "--output-dir", str(tmp_path / "out"), "--ray", "--quiet"],
        env=env, capture_output=True, text=True, timeout=300)
    assert swept.returncode == 0, swept.stderr
    assert len((tmp_path / "out" / "sweep.csv").read_text().splitlines()) == 3
    assert set(Path(tempfile.gettempdir()).glob("npuplan-ray-*")) == before
