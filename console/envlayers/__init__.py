"""Notebook environment layers (issue 31), below both the kernel and the server.

The kernel resolves a notebook's requirements and uses their layer (console/kernel/envs.py); the
server builds, seals and prunes the shared layers (console/server/sessions/env_builds.py,
console/server/sessions/environments.py). The rooms rule forbids the server importing the kernel, so what
both need lives here: layers.py (the folder: names, sealing, use, removal; stdlib only) and
build.py (uv: resolution, locks, installing, the size limit).
"""
