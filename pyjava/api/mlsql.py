"""`from pyjava.api.mlsql import RayContext` as in MLSQL notebooks; implemented by console.runtime."""
from console.runtime.context import PythonContext, RayContext
from console.runtime.data import DataServer

__all__ = ["DataServer", "PythonContext", "RayContext"]
