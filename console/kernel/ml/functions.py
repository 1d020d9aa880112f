"""SQL functions every session has: Byzer's vector functions (vec_dense, vec_argmax, …) over double[]."""
from __future__ import annotations

from typing import Any


def install(sql: Any) -> None:
    """Register the functions on a new SqlEngine (console.kernel.sql.SqlEngine.register_function)."""
