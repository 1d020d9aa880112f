"""The Ray cluster cells run on (the embedded head's lifecycle, or an existing cluster), and the
sandbox every kernel, cell worker and the embedded head run in.

Runs in: the server (which starts, owns and stops the embedded head, and starts sandboxes) and
the kernel (which asks its server for the head).
"""
