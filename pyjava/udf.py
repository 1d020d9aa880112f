"""`from pyjava.udf import UDFMaster, UDFWorker, UDFBuilder, UDFBuildInFunc`, as Byzer's docs write it.

Implemented in console.worker.udf."""
from console.worker.udf import UDFBuildInFunc, UDFBuilder, UDFMaster, UDFWorker

__all__ = ["UDFBuildInFunc", "UDFBuilder", "UDFMaster", "UDFWorker"]
