"""The notebook environment's part of a Session (console/kernel/session.py): its requirements, the
layer they build to, and handing that layer to the Python runtime (issue 31)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from console.config import Config
from console.kernel.errors import CellError

if TYPE_CHECKING:
    from console.kernel.envs import NotebookEnv
    from console.kernel.python_runtime import PythonRuntime


class SessionEnvironment:
    """Mixed into Session, which sets cfg, cache_dir and _runtime."""

    cfg: Config
    _runtime: PythonRuntime | None
    _env: NotebookEnv | None = None           # the notebook's packages (!pip / %pip), read at first need
    _env_applied = False                      # the runtime has the environment's layer
    _env_preset: dict[str, Any] | None = None  # the notebook's stored environment, given at start
    layer_server: Callable[[str], str] | None = None  # behind the sandbox: the server builds and seals layers

    @property
    def cache_dir(self) -> Path:
        raise NotImplementedError

    def notebook_env(self) -> NotebookEnv:
        if self._env is None:
            from console.kernel.envs import NotebookEnv

            self._env = NotebookEnv(self.cfg, self.cfg.data_dir, self.cache_dir, self._env_preset,
                                    self.layer_server)
        return self._env

    def environment_lock(self) -> str:
        """The lock hash of the layer this session's Python cells ran in ('' for the base)."""
        return self._env.lock_hash if self._env is not None and self._env.requirements else ""

    def notebook_lock(self) -> str:
        """The lock of the notebook's environment as this session has it now, applied or not ('': the base)."""
        env = self.notebook_env()
        return env.lock_hash if env.requirements else ""

    def preset_environment(self, environment: dict[str, Any]) -> None:
        """The notebook's stored requirements (console/wire/environment.py), before the first cell:
        they win over what this session's cache folder remembers."""
        self._env_preset, self._env, self._env_applied = dict(environment), None, False

    def release_environment(self) -> None:
        """The kernel stops: its private layers (behind the sandbox) go with it."""
        from console.kernel.envs import release_private

        release_private(self.cfg.data_dir)

    def refresh_environment(self) -> None:
        """Hand the runtime the layer of the notebook's requirements (a new kernel of a notebook with
        requirements finds its layer by the lock hash, built again only when the data dir lost it)."""
        if self._runtime is None:
            return
        from console.kernel.envs import EnvError, site_path

        try:
            self._runtime.layer_path = site_path(self.notebook_env().layer())
            self._env_applied = True
        except EnvError as exc:
            raise CellError("python", f"the notebook's environment cannot be built: {exc}") from None
