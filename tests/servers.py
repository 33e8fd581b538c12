"""Helpers for tests that run a real server: in this process, or as ``smpref serve``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from smpref.serve.events import LOGGER
from smpref.serve.listener import ServeConfig, SmpServer

SMPREF = str(Path(sys.executable).parent / "smpref")
T = TypeVar("T")


@contextlib.asynccontextmanager
async def embedded(folder: Path, **config: Any) -> AsyncIterator[SmpServer]:
    """A started server on a free loopback port, stopped (drained) on exit. END and DELD go
    at once unless ``pending_events_interval`` says otherwise (tests that wait for them would
    otherwise wait up to deployed's 15 s each)."""
    config.setdefault("pending_events_interval", 0.0)
    server = SmpServer(folder, ServeConfig(port=0, **config))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def run_embedded(folder: Path, scenario: Callable[[str], Awaitable[None]],
                 **config: Any) -> None:
    """Run ``scenario`` with the address of an :func:`embedded` server (``config`` its
    ServeConfig fields) in a new event loop."""
    async def main() -> None:
        async with embedded(folder, **config) as server:
            await scenario(server.address)
    asyncio.run(main())


@contextlib.contextmanager
def logged(event: str) -> Iterator[list[dict[str, Any]]]:
    """The fields of every ``event`` an in-process server logs meanwhile."""
    seen: list[dict[str, Any]] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage() == event:
                seen.append(record.fields)  # type: ignore[attr-defined]

    handler, level = Capture(), LOGGER.level
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    try:
        yield seen
    finally:
        LOGGER.removeHandler(handler)
        LOGGER.setLevel(level)


class ServeProcess:
    """``smpref serve`` in a child process; its events go to ``<folder>.log``. END and DELD
    go at once unless ``extra`` gives ``--end-interval``."""

    def __init__(self, folder: Path, *extra: str, port: int = 0) -> None:
        if "--end-interval" not in extra:
            extra = ("--end-interval", "0", *extra)
        self.folder = folder
        self.log_path = folder.with_suffix(".log")
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [SMPREF, "serve", "--store", str(folder), "--port", str(port), *extra],
            stdout=subprocess.PIPE, stderr=self.log, cwd=folder.parent)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode().strip()
        if not line.startswith("smp://"):
            self.process.kill()
            raise RuntimeError(f"smpref serve did not start: {line!r}; log: "
                               f"{self.log_path.read_text()[-2000:]}")
        self.address = line

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def terminate(self, timeout: float = 30) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def kill(self) -> int:
        os.kill(self.process.pid, signal.SIGKILL)
        return self.wait(30)

    def wait(self, timeout: float) -> int:
        code = self.process.wait(timeout)
        self.log.close()
        return code

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log_path.read_text().splitlines()
                if line.startswith("{")]

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        if not self.log.closed:
            self.log.close()


class LoopThread:
    """An event loop running in a daemon thread, for servers that sync code (Hypothesis tests,
    subprocesses) talks to. Exceptions the loop reports are collected in ``errors``."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(lambda _loop, context: self.errors.append(
            f"{context.get('message')}: {context.get('exception')!r}"))
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run ``coroutine`` on the loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


class ThreadedServer(LoopThread):
    """An smpref server on a :class:`LoopThread`."""

    def __init__(self, folder: Path, **config: Any) -> None:
        super().__init__()

        config.setdefault("pending_events_interval", 0.0)

        async def start() -> SmpServer:
            server = SmpServer(folder, ServeConfig(port=0, **config))
            await server.start()
            return server

        self.server = self.run(start(), 30)

    @property
    def address(self) -> str:
        return self.server.address

    def stop(self) -> None:
        self.run(self.server.stop())
        self.close()
