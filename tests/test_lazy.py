"""eqc._lazy: a package's names found in their modules on first use, and a clear error for any other name."""

from __future__ import annotations

import pytest

from eqc._lazy import lazy_attribute, lazy_homes


def test_each_name_is_imported_from_its_module_on_first_use() -> None:
    homes = lazy_homes({"eqc.io": ("JsonRecord", "json_safe"), "eqc._checks": ("check_int",)})
    assert homes == {"JsonRecord": "eqc.io", "json_safe": "eqc.io", "check_int": "eqc._checks"}
    from eqc._checks import check_int

    assert lazy_attribute("pkg", homes, "check_int") is check_int
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'missing'"):
        lazy_attribute("pkg", homes, "missing")
