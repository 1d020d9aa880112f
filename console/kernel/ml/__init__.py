"""Machine learning in MLSQL: `train`, `predict` and `register <Algorithm>.`path` as f`.

Byzer's algorithm names map to scikit-learn estimators (estimators.py); models live under the
statement's path with their metadata and versions (models.py).

The statements come in through verbs.py. This file imports nothing: importing any module of the
package (the extensions' registry reads estimators.py) runs no other import of the kernel's.
"""
