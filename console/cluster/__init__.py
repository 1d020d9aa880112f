"""The Ray cluster cells run on: the embedded head's lifecycle, or an existing cluster.

Runs in: the server (which owns and stops the embedded head) and the kernel (which finds it).
"""
