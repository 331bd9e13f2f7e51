"""Issue 44: each KARANI_* setting is declared once (memory.conf, qualify.conf, the site's own
table), and the site's settings, the system checks and the README come from those declarations."""

import ast
import re
from pathlib import Path

from django.conf import settings

from karani_site.settings import SITE_SETTINGS
from memory import conf as memory_conf
from qualify import conf as qualify_conf

REPO = Path(__file__).resolve().parent.parent
APPS = (*memory_conf.SETTINGS, *qualify_conf.SETTINGS)
DECLARED = (*APPS, *SITE_SETTINGS)
# Where the declarations live; everywhere else a setting is only read.
DECLARING = {"memory/conf.py", "qualify/conf.py"}
# The one default the site chooses for itself: the checkout's var/, which a host cannot have.
SITE_DEFAULT = re.compile(r"karani_site/settings\.py:\d+ KARANI_DATA_DIR")


def test_each_setting_is_declared_once():
    names = [s.name for s in DECLARED]
    assert len(names) == len(set(names))
    assert all(name.startswith("KARANI_") for name in names)


def test_every_karani_setting_the_site_has_is_declared():
    site = {name for name in dir(settings) if name.startswith("KARANI_")}
    assert site <= {s.name for s in DECLARED}
    # The apps' settings reach the site as their declarations read the environment.
    assert {s.name for s in APPS} <= site


def test_the_readme_configuration_table_lists_every_declared_setting():
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("| variable |") :].split("\n\n")[0]
    listed = set(
        re.findall(r"`(KARANI_\w+)`", "\n".join(r.split("|")[1] for r in table.splitlines()))
    )
    assert listed == {s.name for s in DECLARED}


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == name for n in ast.walk(node))


def _statements_of_a_setting(path: Path, names: set[str]) -> list[str]:
    """Lines that assign a setting's name, use it as a dict key, or pass it to a call (an
    environment read, a getattr with a default, a second declaration)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            hits = [t.id for t in targets if isinstance(t, ast.Name) and t.id in names]
        elif isinstance(node, ast.Dict):
            # A key whose value reads that setting (a report's label) restates nothing.
            pairs = zip(node.keys, node.values, strict=True)
            pairs = [(k.value, v) for k, v in pairs if isinstance(k, ast.Constant)]
            hits = [key for key, value in pairs if key in names and not _reads(value, key)]
        elif isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            hits = [a.value for a in args if isinstance(a, ast.Constant) and a.value in names]
        else:
            continue
        found += [f"{path.relative_to(REPO)}:{node.lineno} {name}" for name in hits]
    return found


def test_no_module_states_an_app_setting_outside_its_declaration():
    names = {s.name for s in APPS}
    found = []
    for package in ("memory", "qualify", "karani_site"):
        for path in sorted((REPO / package).rglob("*.py")):
            if str(path.relative_to(REPO)) not in DECLARING:
                found += _statements_of_a_setting(path, names)
    assert [f for f in found if not SITE_DEFAULT.fullmatch(f)] == []
    assert len(found) == 1
