"""Adjusting the p-values of a family of tests together, so that a claim made on any of them keeps its level."""

from __future__ import annotations

from collections.abc import Mapping

from eqc._checks import check_float

__all__ = ["holm"]


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjustment (family-wise error, any dependence between the tests): with the ``m`` p-values
    sorted ascending, the ``k``-th (from 1) becomes ``max over j <= k of min(1, (m - j + 1) p_(j))``. Returns the
    adjusted p-values under the same names, in the same order; rejecting those below ``alpha`` controls the chance
    of any false rejection in the family at ``alpha``."""
    if not isinstance(p_values, Mapping):
        raise TypeError(f"p_values must be a mapping of test name to p-value, got {type(p_values).__name__}")
    checked = {name: check_float(p, f"p_values[{name!r}]", low=0, high=1) for name, p in p_values.items()}
    m, running, adjusted = len(checked), 0.0, {}
    for rank, name in enumerate(sorted(checked, key=checked.__getitem__)):
        running = max(running, min(1.0, (m - rank) * checked[name]))
        adjusted[name] = running
    return {name: adjusted[name] for name in checked}
