"""Trained models on disk: `<path>/_model_N/meta.json` and `<path>/_model_N/model/<algIndex>/model.pkl`.

Byzer's layout: each `train` with keepVersion="true" (the default) writes the next `_model_N`,
keepVersion="false" replaces them all with `_model_0`. Paths are confined like `save`'s
(console/sources/paths.py). Models are pickled scikit-learn estimators: loading one runs code
from the file, which is no more than the notebook's own Python cells may do in the same sandbox.
"""
from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from console.sources import SourceContext, SourceError
from console.sources.paths import resolve, resolve_target

_VERSION = re.compile(r"_model_(\d+)$")
META = "meta.json"
# Unpickled models by (model file, its mtime): a registered function or a repeated predict
# must not unpickle a forest per call.
_LOADED: dict[tuple[str, float], Any] = {}


@dataclass
class Loaded:
    """One group's fitted model with its version's metadata."""
    model: Any
    meta: dict[str, Any]
    group: dict[str, Any]
    version: int


def versions(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    found = (_VERSION.match(p.name) for p in folder.iterdir() if p.is_dir())
    return sorted(int(m.group(1)) for m in found if m)


def save(ctx: SourceContext, path: str, keep_version: bool, meta: dict[str, Any],
         models: dict[int, bytes]) -> tuple[Path, int]:
    """Write a new version (its folder appears whole or not at all); return (its folder, its number)."""
    root = resolve_target(ctx, path)
    if root.exists() and not root.is_dir():
        raise SourceError(f"cannot save a model to {path}: it is a file")
    root.mkdir(parents=True, exist_ok=True)
    existing = versions(root)
    version = (existing[-1] + 1 if existing else 0) if keep_version else 0
    stage = root / f".stage-{uuid.uuid4().hex[:8]}"
    try:
        stage.mkdir()
        for index, blob in models.items():
            folder = stage / "model" / str(index)
            folder.mkdir(parents=True)
            (folder / "model.pkl").write_bytes(blob)
        meta = {**meta, "version": version}
        for group in meta["groups"]:
            group["modelPath"] = str(root / f"_model_{version}" / "model" / str(group["algIndex"]))
        (stage / META).write_text(json.dumps(meta, indent=1), encoding="utf-8")
        if not keep_version:
            for old in existing:
                shutil.rmtree(root / f"_model_{old}")
        os.rename(stage, root / f"_model_{version}")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return root / f"_model_{version}", version


def load(ctx: SourceContext, path: str, algorithm: str, options: dict[str, str]) -> Loaded:
    """The model at path trained with `algorithm`: modelVersion (default latest), then algIndex or
    autoSelectByMetric (default: the best f1 for classifiers, r2 for regressors, else the first success)."""
    root = resolve(ctx, path)
    found = versions(root)
    if not found:
        raise SourceError(f"no model at {path}: train a table as {algorithm}.`{path}` first")
    version = found[-1]
    if options.get("modelVersion"):
        version = int(options["modelVersion"])
        if version not in found:
            raise SourceError(f"model {path} has no version {version}; versions: {', '.join(map(str, found))}")
    folder = root / f"_model_{version}"
    meta = json.loads((folder / META).read_text(encoding="utf-8"))
    if meta["algorithm"].lower() != algorithm.lower():
        raise SourceError(f"the model at {path} was trained with {meta['algorithm']}, not {algorithm}")
    group = pick_group(meta, options, path)
    file = folder / "model" / str(group["algIndex"]) / "model.pkl"
    key = (str(file), file.stat().st_mtime)
    if key not in _LOADED:
        _LOADED.clear()  # one model at a time is plenty here; keeps memory bounded
        _LOADED[key] = pickle.loads(file.read_bytes())
    return Loaded(_LOADED[key], meta, group, version)


def pick_group(meta: dict[str, Any], options: dict[str, str], path: str) -> dict[str, Any]:
    ok = [g for g in meta["groups"] if g["status"] == "success"]
    if not ok:
        raise SourceError(f"no group of the model at {path} trained successfully: "
                          + "; ".join(f"{g['algIndex']}: {g['message']}" for g in meta["groups"]))
    if options.get("algIndex"):
        index = int(options["algIndex"])
        match = [g for g in ok if g["algIndex"] == index]
        if not match:
            raise SourceError(f"model {path} has no successful group {index}; groups: "
                              + ", ".join(str(g["algIndex"]) for g in ok))
        return match[0]
    metric = options.get("autoSelectByMetric") or {"classifier": "f1", "regressor": "r2"}.get(meta["kind"], "")
    scored = [g for g in ok if metric in g["metrics"]]
    if options.get("autoSelectByMetric") and not scored:
        have = sorted({k for g in ok for k in g["metrics"]})
        raise SourceError(f"no group of model {path} has the metric {metric!r} (train with evaluateTable); "
                          f"metrics: {', '.join(have) or 'none'}")
    lower_is_better = metric in ("rmse", "mse", "mae")
    if scored:
        return sorted(scored, key=lambda g: g["metrics"][metric], reverse=not lower_is_better)[0]
    return ok[0]
