"""One output model: redraw collapsing, batching, the inline head/tail plan in bytes, the stored-run view, replay.

Runs in: the server. The notebook page's run reads, the run API, the socket replay and the
published page all show stored runs through view.py (and its one inline plan, inline.py), so
all of them show the same output.
"""
