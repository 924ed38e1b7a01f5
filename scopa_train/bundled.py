"""The configs that ship with the kit, found by name: ``scopa train --config quick``.

They live in ``scopa_train/configs/`` (in a checkout a link to the top-level ``configs/``,
their one source; the wheel and the sdist hold the files). A path that exists always
wins over a bundled name; a name that is neither is one line listing the bundled names.
"""

from __future__ import annotations

from pathlib import Path

from .config import ConfigError

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
SUFFIX = ".yaml"


def bundled_configs() -> dict[str, Path]:
    """Every bundled config by name (its file name without ``.yaml``), sorted."""
    if not CONFIG_DIR.is_dir():
        return {}
    return {p.stem: p for p in sorted(CONFIG_DIR.glob(f"*{SUFFIX}")) if p.is_file()}


def first_comment(path: Path) -> str:
    """The text of a config's first comment line ("" when it has none)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                return line.lstrip("#").strip()
            if line.strip():
                return ""
    return ""


def config_path(config: str | Path) -> Path:
    """The file ``--config`` names: an existing path as given, else the bundled config of
    that name (``quick`` or ``quick.yaml``); ``ConfigError`` listing the bundled names
    when it is neither."""
    given = Path(config)
    if given.exists():
        return given
    found = bundled_configs()
    name = given.name[:-len(SUFFIX)] if given.name.endswith(SUFFIX) else given.name
    if str(given.parent) == "." and name in found:
        return found[name]
    names = ", ".join(found) or "none (this install has no configs folder)"
    raise ConfigError(f"config {str(config)!r} is neither a file nor a bundled config; "
                      f"the bundled configs: {names} (scopa train --list-configs)")


def listing() -> str:
    """``scopa train --list-configs``: each bundled config's name and first comment line."""
    found = bundled_configs()
    if not found:
        return f"no bundled configs ({CONFIG_DIR} is missing)"
    width = max(map(len, found))
    lines = [f"{name:<{width}}  {first_comment(path)}" for name, path in found.items()]
    return "\n".join([f"bundled configs ({CONFIG_DIR}); train one with "
                      f"`scopa train --config NAME`:", *lines])
