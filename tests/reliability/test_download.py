"""The download path end to end against HTTP servers on 127.0.0.1 serving the official archives."""
import hashlib
import threading
import time

import pytest

from core.data.download_job import DownloadJob
from core.data.downloader import ARCHIVES, DownloadCancelled, download_mnist
from core.data.idx import DataError
from tests.support.helpers import wait_for
from tests.support.mirror import Server

TEST_ARCHIVES = {k: v for k, v in ARCHIVES.items() if k.startswith("t10k")}


@pytest.fixture
def gz_files(shared_gz):
    return {name: (shared_gz / name).read_bytes() for name in TEST_ARCHIVES}


@pytest.fixture
def serve(gz_files):
    servers = []

    def start(mode="ok"):
        s = Server(gz_files, mode)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.close()


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


def test_download_verifies_unpacks_and_reports_progress(tmp_path, serve, shared_mnist):
    s = serve()
    events = []
    root = download_mnist(tmp_path / "m", (s.url,), archives=TEST_ARCHIVES, progress=events.append)
    for name in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        assert _md5(root / "test" / name) == _md5(shared_mnist / "test" / name)
    assert not (root / ".download").exists()  # archives removed, no partial files left
    last = [e for e in events if e.file == "t10k-images-idx3-ubyte.gz"][-1]
    assert last.total == last.done == 1648877 and last.speed > 0 and last.files_total == 2


def test_resume_continues_a_partial_file(tmp_path, serve, gz_files):
    s = serve()
    cache = tmp_path / "m" / ".download"
    cache.mkdir(parents=True)
    (cache / "t10k-images-idx3-ubyte.gz.part").write_bytes(gz_files["t10k-images-idx3-ubyte.gz"][:500_000])
    download_mnist(tmp_path / "m", (s.url,), archives=TEST_ARCHIVES)
    assert s.ranges == ["bytes=500000-"]
    assert (tmp_path / "m" / "test" / "t10k-images-idx3-ubyte").stat().st_size == 16 + 10000 * 784


def test_falls_back_to_the_next_mirror(tmp_path, serve):
    bad, good = serve("missing"), serve()
    download_mnist(tmp_path / "m", (bad.url, good.url), archives=TEST_ARCHIVES)
    assert (tmp_path / "m" / "test" / "t10k-labels-idx1-ubyte").exists()


def test_wrong_bytes_fail_md5_and_leave_no_file(tmp_path, serve):
    s = serve("wrong")
    with pytest.raises(DataError) as e:
        download_mnist(tmp_path / "m", (s.url,), archives=TEST_ARCHIVES, retries=0)
    assert "does not match the published" in str(e.value)
    assert not (tmp_path / "m" / "test" / "t10k-images-idx3-ubyte").exists()
    assert list((tmp_path / "m" / ".download").iterdir()) == []


def test_truncated_transfer_is_kept_for_resume_and_then_completed(tmp_path, serve):
    s = serve("truncate")
    with pytest.raises(DataError) as e:
        download_mnist(tmp_path / "m", (s.url,), archives=TEST_ARCHIVES, retries=0)
    assert "connection closed after" in str(e.value) and "resumes" in str(e.value)
    assert not (tmp_path / "m" / "test" / "t10k-images-idx3-ubyte").exists()
    part = tmp_path / "m" / ".download" / "t10k-images-idx3-ubyte.gz.part"
    assert 0 < part.stat().st_size < 1648877
    s.mode = "ok"
    download_mnist(tmp_path / "m", (s.url,), archives=TEST_ARCHIVES)
    assert s.ranges and (tmp_path / "m" / "test" / "t10k-images-idx3-ubyte").exists()


def test_a_hanging_server_times_out(tmp_path, serve):
    s = serve("hang")
    t = time.monotonic()
    with pytest.raises(DataError) as e:
        download_mnist(tmp_path / "m", (s.url,), archives=TEST_ARCHIVES, timeout=0.5, retries=0)
    assert time.monotonic() - t < 3 and "timed out" in str(e.value)


def test_cancel_keeps_the_partial_file(tmp_path, serve):
    s = serve()
    cancel = threading.Event()

    def progress(p):
        if p.done > 100_000:
            cancel.set()

    with pytest.raises(DownloadCancelled):
        download_mnist(tmp_path / "m", (s.url,), archives=TEST_ARCHIVES, progress=progress, cancel=cancel)
    assert (tmp_path / "m" / ".download" / "t10k-images-idx3-ubyte.gz.part").stat().st_size > 100_000


def test_a_download_job_runs_in_the_background_to_done(tmp_path, serve):
    """What the Data page drives: a DownloadJob reports progress while it runs and ends done."""
    s = serve()
    job = DownloadJob.start(tmp_path / "m", mirrors=(s.url,), archives=TEST_ARCHIVES)
    job.wait(60)
    assert job.ended and job.state == "done" and job.error is None
    assert job.progress.files_total == 2 and job.progress.done == job.progress.total
    assert (tmp_path / "m" / "test" / "t10k-labels-idx1-ubyte").exists()


def test_a_download_job_can_be_cancelled_and_says_so(tmp_path, serve):
    s = serve("hang")  # sends 1,000 bytes, then stalls: the job is mid-file when cancelled
    job = DownloadJob.start(tmp_path / "m", mirrors=(s.url,), archives=TEST_ARCHIVES, timeout=5.0, retries=0)
    wait_for(lambda: job.progress is not None, timeout=10, what="the first progress report")
    assert job.state == "running" and not job.ended
    job.cancel()
    job.wait(10)
    assert job.state == "cancelled" and isinstance(job.error, DownloadCancelled)


def test_a_failed_download_job_keeps_the_reason(tmp_path, serve):
    s = serve("missing")
    job = DownloadJob.start(tmp_path / "m", mirrors=(s.url,), archives=TEST_ARCHIVES, retries=0)
    job.wait(30)
    assert job.state == "failed" and "Could not download" in str(job.error) and "Not Found" in str(job.error)


def test_a_servers_own_mirror_from_the_environment_is_used_by_default(tmp_path, serve, monkeypatch):
    """$STUDIO_MNIST_MIRRORS (an internal mirror) is what the Data page's and the command line's downloads use."""
    s = serve()
    monkeypatch.setenv("STUDIO_MNIST_MIRRORS", f"http://127.0.0.1:9/nothing/, {s.url}")
    job = DownloadJob.start(tmp_path / "m", archives=TEST_ARCHIVES, retries=0)
    job.wait(60)
    assert job.state == "done", job.error
    assert job.options["mirrors"] == ("http://127.0.0.1:9/nothing/", s.url)
