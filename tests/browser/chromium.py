"""Headless Chromium (the Debian package `chromium`) as the tests and the README use it: a page
rendered to PNG, or its DOM after parsing, with a fresh profile and nothing that reaches out to
the network on its own (no updates, no sync, no QUIC, no background requests).

`python -m tests.browser.chromium PAGE.html OUT.png --width 1280 --height 1000` takes the
screenshot the README shows (`make screenshots`).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["FLAGS", "chromium", "dump_dom", "screenshot"]

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)


def chromium() -> str:
    """The browser's path; a missing browser fails the test with the command that installs it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("chromium is not installed: run `apt-get install -y chromium`")
    return found


def _run(page: Path, *arguments: str, timeout: float) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="spa-chromium-") as profile:
        return subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", *arguments, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        )


def screenshot(
    page: Path, png: Path, *, width: int = 1280, height: int = 1000, timeout: float = 120
) -> None:
    """Render `page` in a `width` x `height` window and write it to `png`."""
    png.unlink(missing_ok=True)
    _run(page, f"--window-size={width},{height}", f"--screenshot={png.resolve()}", timeout=timeout)
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot to {png}")


def dump_dom(page: Path, *, timeout: float = 120) -> str:
    """The serialised DOM of `page` once Chromium has parsed and laid it out."""
    return _run(page, "--dump-dom", timeout=timeout).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1000)
    arguments = parser.parse_args()
    screenshot(arguments.page, arguments.png, width=arguments.width, height=arguments.height)


if __name__ == "__main__":
    main()
