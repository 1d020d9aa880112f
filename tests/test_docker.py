"""docker/: no Docker engine here, so the files are checked for what they promise."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCKER = ROOT / "docker"


def _compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())  # type: ignore[no-any-return]


def _pins() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return dict(d.split("==", 1) for d in deps if "==" in d)


def test_services_ports_and_wiring() -> None:
    services = _compose()["services"]
    assert set(services) == {"server", "ray-head"}
    server, head = services["server"], services["ray-head"]
    assert server["environment"]["CONSOLE_RAY_ADDRESS"] == "ray://ray-head:10001"
    assert server["environment"]["CONSOLE_HOST"] == "0.0.0.0"
    assert any(str(p).endswith(":5000:5000") or str(p) == "5000:5000" for p in server["ports"])
    assert "ray-head" in server["depends_on"]
    assert "console-data:/data" in server["volumes"] and server["environment"]["CONSOLE_DATA_DIR"] == "/data"
    command = " ".join(head["command"])
    assert "--head" in command and "--ray-client-server-port=10001" in command
    assert "10001" in [str(p) for p in head["expose"]]
    # The head checks a token, the `ray-token` secret, which the server hands to its kernels.
    assert head["environment"]["RAY_AUTH_MODE"] == "token"
    assert "ray-token" in head["secrets"] and "ray-token" in server["secrets"]
    assert "/run/secrets/ray-token" in command and "ray-token" in " ".join(head["healthcheck"]["test"])
    assert server["environment"]["CONSOLE_RAY_AUTH_TOKEN_FILE"] == "/run/secrets/ray-token"
    assert _compose()["secrets"]["ray-token"]["file"] == "./ray-token"


def test_builds_point_at_files_that_exist() -> None:
    for name, service in _compose()["services"].items():
        build = service["build"]
        context = (DOCKER / build["context"]).resolve()
        assert context == ROOT, name
        dockerfile = context / build["dockerfile"]
        assert dockerfile.exists(), name
        copied = 0
        for line in dockerfile.read_text().splitlines():
            m = re.match(r"COPY (?!--from)(?:--\S+ )*(.+) \S+$", line)
            if m:
                for src in m.group(1).split():
                    assert (ROOT / src).exists(), f"{dockerfile.name}: COPY {src} is missing"
                    copied += 1
        assert copied >= 3, f"{dockerfile.name}: expected COPY lines for the sources"


def test_ray_and_python_versions_match() -> None:
    """Ray Client needs the same Ray and Python minor version in the server and the head."""
    ray_from = re.search(r"^FROM rayproject/ray:(\S+)", (DOCKER / "ray.Dockerfile").read_text(), re.M)
    assert ray_from, "the Ray head is built on rayproject/ray"
    tag = re.match(r"([\d.]+)-py(\d)(\d+)-", ray_from.group(1))
    assert tag, ray_from.group(1)
    assert tag.group(1) == _pins()["ray"]
    server_from = re.search(r"^FROM python:(\d+)\.(\d+)", (DOCKER / "Dockerfile").read_text(), re.M)
    assert server_from and server_from.groups() == (tag.group(2), tag.group(3))


def test_server_image_runs_the_console() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    assert 'CMD ["mlsql-console", "serve"]' in text
    assert "mlsql-console" in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "ENV" in text and "CONSOLE_HOST=0.0.0.0" in text  # listening on loopback would be unreachable
