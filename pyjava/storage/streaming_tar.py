"""`from pyjava.storage import streaming_tar` as in MLSQL notebooks; implemented by console.worker."""
from console.worker.streaming_tar import BLOCK_SIZE, build_rows_from_file, save_rows_as_file

__all__ = ["BLOCK_SIZE", "build_rows_from_file", "save_rows_as_file"]
