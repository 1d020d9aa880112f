"""The tests' one harness, shared by every folder and the benchmarks (runs in the test process).

- live_server.py: a real server on 127.0.0.1, in the test process (`LiveServer`) or as a
  production gunicorn child process (`start_server`), whose kernels run a kernel module of the
  test's choosing (the scripted one by default);
- scripted_engine.py / scripted_kernel.py: the real engine plus `--script` cells, and the kernel
  entry module that injects it;
- serve.py: the child process's entry, `create_app(..., kernel_module=...)` under gunicorn;
- clients.py: a recording Socket.IO viewer and JSON HTTP calls;
- wheels.py: pure-Python wheels written as zips, a wheelhouse for `%pip install` tests.

Import it as `tests.support` (the repository root is on sys.path; tests/conftest.py makes sure).
"""
