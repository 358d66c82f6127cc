"""What the browser tests look for in a screenshot: pixels of a page's own colours, and the
blocks they form from the top of the page down (one per chart)."""

from __future__ import annotations

from PIL import Image

__all__ = ["bands", "rgb"]


def rgb(color: str) -> tuple[int, int, int]:
    return (int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16))


def _color(pixel: object) -> tuple[int, ...]:
    return tuple(pixel[:3]) if isinstance(pixel, tuple) else ()


def bands(image: Image.Image, color: str, *, gap: int = 40, least: int = 300) -> list[int]:
    """The vertical clusters of pixels of `color` (rows within `gap` of each other), as the
    number of such pixels in each; clusters under `least` pixels (the legend) are left out."""
    wanted = rgb(color)
    width, height = image.size
    pixels = image.load()
    assert pixels is not None
    counts = [sum(1 for x in range(width) if _color(pixels[x, y]) == wanted) for y in range(height)]
    clusters: list[list[int]] = []
    last = -gap - 1
    for y, count in enumerate(counts):
        if not count:
            continue
        if y - last > gap:
            clusters.append([])
        clusters[-1].append(count)
        last = y
    return [sum(cluster) for cluster in clusters if sum(cluster) >= least]
