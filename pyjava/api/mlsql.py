"""`from pyjava.api.mlsql import RayContext` as in MLSQL notebooks; implemented by console.worker and console.actors."""
from console.worker.context import PythonContext, RayContext
from console.actors.data import DataServer

__all__ = ["DataServer", "PythonContext", "RayContext"]
