"""Griffe extension for the site: eqc's docstrings in the form mkdocstrings renders.

1. Sphinx roles (``:class:`~eqc.groups.PermutationGroup```, ``:meth:`act```, ``:mod:`.files```)
   become cross-references. A role is resolved in the scope of the object whose docstring holds it (its
   members, its parents' members and imports, as Python would; in a package's docstring also the
   names its submodules export, and the names a package loads lazily, ``_LAZY``). A resolved target
   becomes an optional reference: a link where the site documents it, code where it does not (a
   private helper). A name of another library (``scipy.stats.permutation_test``) is code, whether or not
   that library is importable where the site is built (:data:`OTHER_LIBRARIES`). A target
   that resolves nowhere stays a required reference, which ``mkdocs build --strict`` reports as an
   error: a docstring that names something that does not exist breaks the build.
2. An ``Args:`` entry for several parameters at once (``in_rep, out_rep: ...``) becomes one entry each.
3. A reST literal block (a paragraph ending in ``::``, then an indented block) becomes a fenced code block.
"""

from __future__ import annotations

import ast
import html
import importlib.util
import re
from typing import Any

import griffe

#: Libraries whose names eqc's docstrings may cite: shown as code even where the library is not installed
#: (the strict build needs none of them; any other importable top-level module counts too).
OTHER_LIBRARIES = frozenset({"escnn", "hypothesis", "numpy", "pettingzoo", "pytest", "ray", "safetensors", "scipy",
                             "shimmy", "sympy", "torch"})
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([\w.]+)`")
SECTION = re.compile(r"^(\s*)(Args|Arguments|Parameters|Attributes):\s*$")
ENTRY = re.compile(r"^(\s+)(\w+(?:,\s*\w+)+):(.*)$")

def _lookup(pkg: griffe.Module, path: str) -> bool:
    parts = path.split(".")
    if parts[0] != pkg.name:
        return False
    obj: Any = pkg
    for k, part in enumerate(parts[1:], 1):
        try:
            obj = obj[part]
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            lazy = _lazy(obj).get(part)
            if lazy is None:
                return False
            return _lookup(pkg, ".".join([lazy, part, *parts[k + 1 :]]))
    return True


def _lazy(obj: Any) -> dict[str, str]:
    """A package's lazily loaded names (``_LAZY = {name: module}``), else {}."""
    try:
        value = obj.members["_LAZY"].value if getattr(obj, "is_module", False) and "_LAZY" in obj.members else None
        return dict(ast.literal_eval(str(value))) if value is not None else {}
    except (ValueError, SyntaxError):
        return {}


def _resolve(pkg: griffe.Module, obj: griffe.Object, name: str) -> str | None:
    """The full path of ``name`` as seen from ``obj``'s docstring, or None."""
    if name.startswith("."):  # relative to obj's package: ``.schema`` from config.agent
        module = obj if obj.is_module else obj.module
        package = module if module.is_init_module else module.parent
        path = f"{package.path}{name}" if package is not None else name[1:]
        return path if _lookup(pkg, path) else None
    if _lookup(pkg, name):
        return name
    head, _, rest = name.partition(".")
    scope: Any = obj
    while scope is not None:
        candidates = []
        try:
            candidates.append(scope.resolve(head))
        except griffe.NameResolutionError:
            pass
        if getattr(scope, "is_init_module", False):
            candidates += [f"{module}.{head}" for module in [m.path for m in scope.modules.values()] if _lookup(pkg, f"{module}.{head}")]
            if head in _lazy(scope):
                candidates.append(f"{_lazy(scope)[head]}.{head}")
        for path in candidates:
            full = f"{path}.{rest}" if rest else path
            if _lookup(pkg, full):
                return full
            if not full.startswith(f"{pkg.name}."):
                return full  # another library's name, imported here
        scope = scope.parent
    return None


def _split_entries(text: str) -> str:
    """``a, b: description`` entries of Args/Attributes sections as one entry per name."""
    lines, out, indent = text.splitlines(), [], None
    k = 0
    while k < len(lines):
        line = lines[k]
        section = SECTION.match(line)
        if section:
            indent = len(section.group(1))
            out.append(line)
            k += 1
            continue
        if indent is not None and line.strip() and len(line) - len(line.lstrip()) <= indent:
            indent = None
        entry = ENTRY.match(line) if indent is not None else None
        if entry:
            lead, names, first = entry.group(1), [n.strip() for n in entry.group(2).split(",")], entry.group(3)
            more = []
            while k + 1 < len(lines) and lines[k + 1].strip() and len(lines[k + 1]) - len(lines[k + 1].lstrip()) > len(lead):
                k += 1
                more.append(lines[k])
            for name in names:
                out += [f"{lead}{name}:{first}", *more]
        else:
            out.append(line)
        k += 1
    return "\n".join(out)


def _literal_blocks(text: str) -> str:
    """``Example::`` and the indented block after it as ``Example:`` and a fenced code block."""
    lines, out, k = text.splitlines(), [], 0
    while k < len(lines):
        line = lines[k]
        if not line.rstrip().endswith("::"):
            out.append(line)
            k += 1
            continue
        indent = len(line) - len(line.lstrip())
        head = line.rstrip()[:-1]
        out.append(head if head.strip() != ":" else "")
        k += 1
        block: list[str] = []
        while k < len(lines) and (not lines[k].strip() or len(lines[k]) - len(lines[k].lstrip()) > indent):
            block.append(lines[k])
            k += 1
        while block and not block[-1].strip():
            block.pop()
        while block and not block[0].strip():
            block.pop(0)
        cut = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
        pad = " " * indent
        out += ["", f"{pad}```", *[f"{pad}{b[cut:]}" if b.strip() else "" for b in block], f"{pad}```", ""]
    return "\n".join(out)


class SphinxRoles(griffe.Extension):
    """Rewrite every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        def visit(obj: griffe.Object) -> None:
            if obj.docstring is not None:
                text = ROLE.sub(lambda m: self._reference(pkg, obj, m), obj.docstring.value)
                obj.docstring.value = _literal_blocks(_split_entries(text))
            for member in obj.members.values():
                if not member.is_alias:
                    visit(member)  # type: ignore[arg-type]

        visit(pkg)

    @staticmethod
    def _reference(pkg: griffe.Module, obj: griffe.Object, match: re.Match[str]) -> str:
        short, name = match.group(1) == "~", match.group(2)
        shown = name.rsplit(".", 1)[-1] if short else name.lstrip(".")
        code = f"<code>{html.escape(shown)}</code>"
        path = _resolve(pkg, obj, name)
        top = name.split(".")[0]
        if path is None and top != pkg.name and (top in OTHER_LIBRARIES or importlib.util.find_spec(top) is not None):
            return code  # another library's name (no inventory offline)
        if path is None:
            return f"[`{shown}`][{name.lstrip('.')}]"  # unresolvable: the strict build reports it
        if not path.startswith(f"{pkg.name}."):
            return code
        return f'<autoref identifier="{html.escape(path)}" optional>{code}</autoref>'
