"""pyjava compatibility: the names MLSQL cells import, implemented by console.worker and console.actors."""
__version__ = "0.3.3"
