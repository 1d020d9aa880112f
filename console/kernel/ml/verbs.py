"""The ML statements' entry from the session: `train`/`predict` (run_verb) and `register` (register_model)."""
from __future__ import annotations

from console import lang
from console.kernel.host import CellRun, SessionHost
from console.kernel.ml.estimators import ALGORITHMS, Algorithm


def algorithm(name: str, stmt: lang.Statement) -> Algorithm:
    """The algorithm named (case-insensitively), or a CellError naming those there are."""
    found = ALGORITHMS.get(name) or next((a for k, a in ALGORITHMS.items() if k.lower() == name.lower()), None)
    if found is None:
        from console.kernel.extensions import unknown

        raise unknown("algorithm", name, sorted(ALGORITHMS), stmt)
    return found


def run_verb(session: SessionHost, stmt: lang.Run, run: CellRun) -> None:
    from console.kernel import extensions

    if extensions.find(stmt.et) is not None:  # Byzer writes e.g. `train t as RateSampler.`` …`
        extensions.run_extension(session, stmt, run)
        return
    alg = algorithm(stmt.et, stmt)
    if stmt.verb == "train":
        from console.kernel.ml.train import train

        train(session, stmt, alg, run)
    else:
        from console.kernel.ml.predict import predict

        predict(session, stmt, alg, run)


def register_model(session: SessionHost, stmt: lang.Register, run: CellRun) -> None:
    from console.kernel.ml.predict import register

    register(session, stmt, algorithm(stmt.et, stmt), run)
