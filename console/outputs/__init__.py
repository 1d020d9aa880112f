"""One output model: redraw collapsing, batching, the inline head/tail plan, replay.

Runs in: the server. Used by the store's run reads, the JSON API, the socket replay and the
published page, so all of them show the same output.
"""
