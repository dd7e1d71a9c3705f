"""Running docker-compose.yml for real with podman: its Docker-compatible API on a private
socket, base images built locally from Debian packages (docker/local-base-images.sh), the
images built from wheels made on this machine (docker/wheelhouse.sh), and a project name of
its own so that nothing else on the machine is touched.

podman schedules a container's health checks with systemd timers; where there is no systemd
(as in CI containers) nothing runs them, and `depends_on: condition: service_healthy` would
wait forever. `HealthChecks` does what the timers do: it runs `podman healthcheck run` (the
health check that the compose file declares, in the container) for the project's containers
every second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("podman", "docker-compose", "debootstrap", "runc")


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


class PodmanService:
    """`podman system service` on a socket in WORKDIR, with runc and no default ulimits."""

    def __init__(self, workdir: Path) -> None:
        self.conf = workdir / "containers.conf"
        self.conf.write_text('[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n')
        self.socket = workdir / "podman.sock"
        self.env = {
            **os.environ,
            "CONTAINERS_CONF": str(self.conf),
            "DOCKER_HOST": f"unix://{self.socket}",
            # docker-compose builds through the API itself, never through a docker CLI.
            "COMPOSE_DOCKER_CLI_BUILD": "0",
            "DOCKER_BUILDKIT": "0",
            # The wheelhouse is made with the Python running the tests.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        self._log = (workdir / "podman-service.log").open("wb")
        self.process = subprocess.Popen(
            ["podman", "system", "service", "--time=0", f"unix://{self.socket}"],
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while not self.socket.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"podman system service did not start; see {self._log.name}")
            time.sleep(0.1)

    def run(
        self, *argv: str, timeout: float, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            list(argv),
            env=self.env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv)} exited with {done.returncode}:\n{done.stdout[-3000:]}\n"
                f"{done.stderr[-3000:]}"
            )
        return done

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self._log.close()


class HealthChecks:
    """Runs the health checks of PROJECT's containers every second, in a thread."""

    def __init__(self, service: PodmanService, project: str) -> None:
        self.service = service
        self.project = project
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="healthchecks", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(1.0):
            label = f"label=com.docker.compose.project={self.project}"
            listed = self.service.run(
                "podman", "ps", "-q", "--filter", label, timeout=30, check=False
            )
            for container in listed.stdout.split():
                self.service.run("podman", "healthcheck", "run", container, timeout=30, check=False)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
