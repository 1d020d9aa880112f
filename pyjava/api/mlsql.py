"""`from pyjava.api.mlsql import RayContext` as in MLSQL notebooks; implemented by console.worker and console.actors."""
from console.actors.data import DataServer
from console.worker.context import PythonContext, RayContext
from pyjava._gone import gone

PythonProjectContext = gone(
    __name__, "PythonProjectContext",
    "the context of a Python project run (conf on stdin, input_data_dir() and output_model_dir() "
    "on local disk)",
    "a Python cell: its `context` global reads the input table (context.fetch_once_as_rows(), "
    "RayContext.connect(globals(), None).fetch_as_dir(dir)) and "
    "ray_context.build_result_from_dir(dir) returns a model directory")

__all__ = ["DataServer", "PythonContext", "PythonProjectContext", "RayContext"]
