"""No import circle in memory, qualify or karani_site, imports inside functions counted (grimp,
the graph lint-imports checks the contracts on, reads every import statement in a module)."""

import grimp
import pytest

PACKAGES = ("memory", "qualify", "karani_site")

pytestmark = pytest.mark.one_pass


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every import circle between modules, one path each (Tarjan's strongly connected sets)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_it_counts_imports_made_inside_functions(graph):
    # memory.index loads the semantic index only in mem0 mode, from inside its functions.
    assert graph.direct_import_exists(importer="memory.index", imported="memory.semantic.sync")


def test_it_finds_no_import_circle(graph):
    assert _cycles(graph) == []
