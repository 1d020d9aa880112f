"""Code that runs inside Ray actors: partition reads (data servers) and output capture hooks.

Runs in: every Ray worker process of a cell's job (and the cell worker, which creates the handles).
Stdlib, pyarrow and numpy only at import time.
"""
