"""pyjava compatibility: the names MLSQL cells import, implemented by console.runtime."""
__version__ = "0.3.3"
