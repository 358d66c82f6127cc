"""The one thing setup.cfg cannot say: PyPI shows README.md without the repository around it,
so its relative links (docs/install.md, ...) are made absolute, pointing at the release's tag.
Everything else is declared in setup.cfg."""

import re
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
REPOSITORY = "https://github.com/scheduled-pod-autoscaler/scheduled-pod-autoscaler"
VERSION = re.search(r'^__version__ = "([^"]+)"', (HERE / "spa/__init__.py").read_text(), re.M)


def long_description() -> str:
    assert VERSION is not None, "spa/__init__.py has no __version__"
    base = f"{REPOSITORY}/blob/v{VERSION[1]}/"
    text = (HERE / "README.md").read_text(encoding="utf-8")
    # [text](target) whose target is neither a URL, nor an anchor, nor an absolute path.
    return re.sub(r"\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)\)", lambda m: f"]({base}{m[1]})", text)


setup(long_description=long_description(), long_description_content_type="text/markdown")
