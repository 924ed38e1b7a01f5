"""The kit's module import graph, function-level imports included, read from the source
(nothing is imported): which module imports which, the import cycles, and the imports
(or module names in strings, such as an entry point ``"pkg.module:attr"``) that reach a
higher layer.

Layers, lowest first: ``scopa_env`` <- ``agents`` <- ``scopa_policy`` <- ``scopa_train``
<- ``scopa_web`` / ``scopa_cli`` <- ``train`` (train.py).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

LAYERS: dict[str, int] = {"scopa_env": 0, "agents": 1, "scopa_policy": 2, "scopa_train": 3,
                          "scopa_web": 4, "scopa_cli": 4, "train": 5}
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(:[A-Za-z_][\w.]*)?")


@dataclass
class Graph:
    """Modules by dotted name (with their files) and the edges between them."""

    files: dict[str, Path]
    imports: dict[str, set[str]] = field(default_factory=dict)  # import statements
    mentions: dict[str, set[str]] = field(default_factory=dict)  # module names in strings

    def layer(self, module: str) -> int:
        return LAYERS[module.split(".")[0]]

    def upward(self) -> list[tuple[str, str, str]]:
        """(module, higher module, "import" | "string") for every reach up a layer."""
        out = []
        for kind, edges in (("import", self.imports), ("string", self.mentions)):
            for m, targets in sorted(edges.items()):
                out += [(m, t, kind) for t in sorted(targets) if self.layer(t) > self.layer(m)]
        return out

    def cycles(self) -> list[list[str]]:
        """The strongly connected components of more than one module (Tarjan)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []
        for root in sorted(self.files):
            if root in index:
                continue
            work = [(root, iter(sorted(self.imports[root])))]
            index[root] = low[root] = len(index)
            stack.append(root)
            on_stack.add(root)
            while work:
                v, children = work[-1]
                w = next(children, None)
                if w is not None:
                    if w not in index:
                        index[w] = low[w] = len(index)
                        stack.append(w)
                        on_stack.add(w)
                        work.append((w, iter(sorted(self.imports[w]))))
                    elif w in on_stack:
                        low[v] = min(low[v], index[w])
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
        return sorted(found)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the layers under ``root``: dotted name -> file."""
    out: dict[str, Path] = {}
    for top in LAYERS:
        single = root / f"{top}.py"
        files = [single] if single.is_file() else sorted((root / top).rglob("*.py"))
        for f in files:
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


def _known(name: str, files: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the kit."""
    while name and name not in files:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, node: ast.Import | ast.ImportFrom, files: dict[str, Path]
             ) -> set[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            package = module.split(".")
            if files[module].name != "__init__.py":
                package = package[:-1]
            package = package[:len(package) - node.level + 1]
            base = ".".join(package + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        # `from pkg import sub` imports the module pkg.sub; `from mod import name`, mod
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                 for a in node.names]
    return {t for t in (_known(n, files) for n in names) if t and t != module}


def build(root: Path) -> Graph:
    """The graph of the kit checked out at ``root``."""
    files = modules(root)
    g = Graph(files, {m: set() for m in files}, {m: set() for m in files})
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):  # every statement, at any depth
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                g.imports[module] |= _targets(module, node, files)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and _DOTTED.fullmatch(node.value) and "." in node.value:
                target = _known(node.value.partition(":")[0], files)
                if target and target != module and "." in target:
                    g.mentions[module].add(target)
    return g
