"""The server's sessions wing: kernels, their queues and processes, the shared session, culling,
what each run read and wrote (manifests) and the events sent about it."""
