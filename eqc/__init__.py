"""eqc: equivariant policies for zero-shot coordination in Dec-POMDPs."""

__all__ = ["__version__"]

#: The package version (the single source: pyproject.toml reads it from here).
__version__ = "0.1.0"
