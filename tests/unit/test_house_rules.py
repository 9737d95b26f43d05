"""The house rules CONTRIBUTING.md names, kept by tests rather than by memory (issue 46):

- no `Any` (or no annotation at all) for a plan or a request anywhere in envkit/ outside
  envkit/checks/: what crosses a seam is typed, and an import cycle is dodged with
  TYPE_CHECKING, never with `Any`;
- every module in envkit/commands/ is a command: `run(request) -> int` over a frozen,
  keyword-only dataclass request;
- templates lay data out and decide nothing: no `{% set %}`, no comparison, no `and`/`or`, no
  `elif` chain, no `is` test, no loop filter, no `default`; a presence test (`{% if x %}`,
  `{% if not x %}`, with or without `else`) and a loop are layout;
- no Python program kept in a string: a program that runs in an image or another interpreter
  is a real module (linted, typed, tested), envkit/runtime/ for the image's.

Each rule's finder is proved able to fail on a small planted example beside it."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import textwrap
import types
import typing
from collections.abc import Iterator
from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

from tests.helpers import REPO

PACKAGE = REPO / "envkit"


def _sources(*, skip: tuple[str, ...] = ()) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if "_templates" in path.parts or rel.startswith(skip):
            continue
        yield rel, ast.parse(path.read_text(encoding="utf-8"))


# --- a. no Any for a plan or a request ------------------------------------------------------


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _plan_models() -> set[str]:
    """The public classes envkit/plan/ defines: the plan and every model made from it."""
    return {
        node.name
        for path in (PACKAGE / "plan").rglob("*.py")
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
    }


PLAN_MODELS = _plan_models()
# A plan or a request by name: `plan`, `request`, `..._plan`, `..._request`, or the usual name
# of one of envkit.plan's models (`python_plan`, `service`, ...).
PLANISH_NAMES = {"plan", "request"} | {_snake(name) for name in PLAN_MODELS}


def _planish_name(name: str) -> bool:
    return name in PLANISH_NAMES or name.endswith(("_plan", "_request"))


def _type_names(annotation: ast.expr) -> set[str]:
    """Every name an annotation mentions, quoted annotations included."""
    found = set()
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                found |= _type_names(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                continue
    return found


def _planish_type(names: set[str]) -> bool:
    return any(name in PLAN_MODELS or name.endswith(("Plan", "Request")) for name in names)


def _untyped(name: str, annotation: ast.expr | None) -> str | None:
    """Why this parameter or attribute breaks the rule, or None."""
    if annotation is None:
        return "no annotation" if _planish_name(name) else None
    names = _type_names(annotation)
    if "Any" in names and (_planish_name(name) or _planish_type(names)):
        return "Any"
    if isinstance(annotation, ast.Name) and annotation.id == "object" and _planish_name(name):
        return "object"
    return None


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.arg]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [extra for extra in (arguments.vararg, arguments.kwarg) if extra is not None]
    yield from every


def untyped_plans(tree: ast.Module) -> Iterator[tuple[int, str, str]]:
    """(line, name, why) for each parameter or attribute that is a plan or a request typed `Any`
    (or not typed at all)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in _parameters(node):
                why = _untyped(arg.arg, arg.annotation)
                if why and arg.arg not in ("self", "cls"):
                    yield arg.lineno, f"{node.name}({arg.arg})", why
        elif isinstance(node, ast.AnnAssign):
            target = node.target
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
            why = _untyped(name, node.annotation)
            if why:
                yield node.lineno, name, why


def test_no_plan_or_request_is_typed_any_outside_the_checks_package() -> None:
    found = [
        f"{rel}:{line} {name}: {why}"
        for rel, tree in _sources(skip=("envkit/checks/",))
        for line, name, why in untyped_plans(tree)
    ]
    assert not found, (
        "type each plan and request (a TYPE_CHECKING import where a cycle threatens):\n"
        + "\n".join(found)
    )


def test_the_any_finder_sees_each_dodge() -> None:
    source = textwrap.dedent(
        """
        from typing import Any
        import typing

        def a(plan: Any) -> None: ...
        def b(plan) -> None: ...
        def c(*, build_request: "Any | None" = None) -> None: ...
        def d(model: Plan | typing.Any) -> None: ...
        def e(python_plan: PythonPlan, client: Any, request: BuildRequest) -> None: ...
        class F:
            plan: Any
            def g(self, python_plan: object) -> None:
                self.request: Any = None
        """
    )
    found = [(line, name, why) for line, name, why in untyped_plans(ast.parse(source))]
    assert [name for _, name, _ in found] == [
        "a(plan)",
        "b(plan)",
        "c(build_request)",
        "d(model)",
        "plan",
        "g(python_plan)",
        "request",
    ], found
    assert "Plan" in PLAN_MODELS and "python_plan" in PLANISH_NAMES


# --- b. every command is run(request) -> int over a frozen, keyword-only request -------------


def _command_modules() -> list[str]:
    return sorted(
        f"envkit.commands.{path.stem}"
        for path in (PACKAGE / "commands").glob("*.py")
        if path.name != "__init__.py"
    )


def command_shape(module: object) -> list[str]:
    """What a command module lacks: `run(request: XRequest) -> int`, XRequest a dataclass that is
    frozen and whose every field is keyword-only."""
    run = getattr(module, "run", None)
    if not inspect.isfunction(run):
        return ["no `run` function"]
    problems = []
    parameters = list(inspect.signature(run).parameters.values())
    if [p.name for p in parameters] != ["request"]:
        problems.append(f"run's parameters are {[p.name for p in parameters]}, not ['request']")
    hints = typing.get_type_hints(run)
    returned = hints.get("return")
    if returned is not int:
        shown = getattr(returned, "__name__", returned)
        problems.append(
            f"run returns {'None' if shown == 'NoneType' else shown}, not int (the exit code)"
        )
    request = hints.get("request")
    if not (isinstance(request, type) and dataclasses.is_dataclass(request)):
        return [*problems, f"run's request is {request}, not a dataclass"]
    if not request.__name__.endswith("Request"):
        problems.append(f"{request.__name__}: a request's name ends in Request")
    if not request.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        problems.append(f"{request.__name__} is not frozen")
    positional = [f.name for f in dataclasses.fields(request) if not f.kw_only]
    if positional:
        problems.append(f"{request.__name__}'s fields {positional} are not keyword-only")
    return problems


@pytest.mark.parametrize("name", _command_modules())
def test_every_command_is_run_over_a_frozen_keyword_only_request(name: str) -> None:
    problems = command_shape(importlib.import_module(name))
    assert not problems, f"{name}: " + "; ".join(problems)


def test_the_command_check_sees_a_loose_request() -> None:
    @dataclasses.dataclass
    class LooseRequest:
        config: str | None = None

    def run(asked: LooseRequest) -> None:  # the shape the check refuses
        del asked

    run.__annotations__ = {"asked": LooseRequest, "return": None}
    assert command_shape(types.SimpleNamespace(run=run)) == [
        "run's parameters are ['asked'], not ['request']",
        "run returns None, not int (the exit code)",
        "run's request is None, not a dataclass",
    ]

    def run_loose(request: LooseRequest) -> int:
        del request
        return 0

    run_loose.__annotations__ = {"request": LooseRequest, "return": int}
    assert command_shape(types.SimpleNamespace(run=run_loose)) == [
        "LooseRequest is not frozen",
        "LooseRequest's fields ['config'] are not keyword-only",
    ]


# --- c. templates decide nothing -------------------------------------------------------------


def _templates() -> list[Path]:
    return [
        REPO / "Dockerfile.j2",
        REPO / "docker-compose.yml.j2",
        *sorted((REPO / "templates").rglob("*.j2")),
    ]


def _presence(test: nodes.Node) -> bool:
    """A presence test: a value from the data (or its absence), nothing computed from it here.
    A method of the data called with data (`k8s.gpu_limit(monitor)`) is Python's decision; one
    called with a literal (`x.startswith("cu")`) is the template's."""
    if isinstance(test, nodes.Not):
        test = test.node
    if isinstance(test, nodes.Call) and isinstance(test.node, nodes.Getattr):
        arguments = [*test.args, *(keyword.value for keyword in test.kwargs)]
        return not any(isinstance(a, nodes.Const | nodes.Literal) for a in arguments)
    return isinstance(test, nodes.Name | nodes.Getattr | nodes.Getitem)


def _decision(node: nodes.Node) -> str | None:
    """What decides here, or None for layout."""
    simple: dict[type[nodes.Node], str] = {
        nodes.Assign: "{% set %}",
        nodes.AssignBlock: "{% set %}",
        nodes.Compare: "a comparison",
        nodes.And: "`and`",
        nodes.Or: "`or`",
        nodes.Test: "an `is` test",
    }
    found = simple.get(type(node))
    if found:
        return found
    if isinstance(node, nodes.If) and node.elif_:
        return "an {% elif %} chain"
    if isinstance(node, nodes.If | nodes.CondExpr) and not _presence(node.test):
        inner = node.test.node if isinstance(node.test, nodes.Not) else node.test
        if not isinstance(inner, tuple(simple)):  # else that inner node is the finding
            return "a condition that is not a presence test"
    if isinstance(node, nodes.For) and node.test is not None:
        return "a loop filter ({% for ... if ... %})"
    if isinstance(node, nodes.Filter) and node.name in ("default", "d"):
        return "a `default` filter"
    return None


def template_decisions(source: str) -> list[str]:
    """'line N: what' for each place a template decides."""
    tree = jinja2.Environment(autoescape=False).parse(source)  # noqa: S701 - parsed, not rendered
    found: list[str] = []
    for node in tree.find_all(nodes.Node):
        what = _decision(node)
        line = f"line {node.lineno}: {what}"
        if what and line not in found:
            found.append(line)
    return found


@pytest.mark.parametrize("path", _templates(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_templates_decide_nothing(path: Path) -> None:
    found = template_decisions(path.read_text(encoding="utf-8"))
    assert not found, (
        f"{path.relative_to(REPO)} decides; make the decision a field of the data the Python "
        "passes it (CONTRIBUTING.md, 'Adding a build decision'):\n" + "\n".join(found)
    )


def test_the_template_check_tells_layout_from_decisions() -> None:
    layout = textwrap.dedent(
        """
        {%- if df.user %}USER {{ df.user }}{% else %}USER root{% endif %}
        {%- if not loop_done %}x{% endif %}
        {%- for item in items %}{{ item | sh }}{% if not loop.last %} {% endif %}{% endfor %}
        AllowTcpForwarding {{ "yes" if ssh.tcp else "no" }}
        {%- macro line(x) %}{{ x }}{% endmacro %}{{ line(df.name) }}
        {%- if k8s.gpu_limit(monitor) %}{{ k8s.gpu_limit(monitor) }}{% endif %}
        """
    )
    assert template_decisions(layout) == []
    deciding = textwrap.dedent(
        """
        {%- set user = df.user %}
        {%- if df.flavor == "cuda" %}a{% elif df.x %}b{% endif %}
        {{ df.title or "nobody" }}
        {%- if df.a and not df.b %}c{% endif %}
        {%- if df.c is defined %}d{% endif %}
        {%- for x in xs if x.on %}{{ x }}{% endfor %}
        {{ df.name | default("n") }}
        {%- if df.items | length %}e{% endif %}
        {%- if df.base.startswith("nvidia/") %}f{% endif %}
        """
    )
    assert template_decisions(deciding) == [
        "line 2: {% set %}",
        "line 3: an {% elif %} chain",
        "line 3: a comparison",
        "line 4: `or`",
        "line 5: `and`",
        "line 6: an `is` test",
        "line 7: a loop filter ({% for ... if ... %})",
        "line 8: a `default` filter",
        "line 9: a condition that is not a presence test",
        "line 10: a condition that is not a presence test",
    ]


# --- d. no Python program kept in a string ---------------------------------------------------

# Strings that are programs and stay so, each with the reason there is no module to move to.
PROGRAMS_THAT_STAY = {
    "envkit/verify/bundle.py:MAIN": (
        "the bundle zip's own __main__.py, three lines naming the package the zip carries"
    ),
    "envkit/checks/core/location.py:python_code": (
        "the bootstrap that puts the checks package (a folder or a zip) on another interpreter's "
        "path and calls a module of it: the program it starts is a module"
    ),
}
PROGRAM_STATEMENTS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)


def _text(node: ast.AST) -> str | None:
    """A string's text; an f-string's with each placeholder as a name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(v.value) if isinstance(v, ast.Constant) else "value" for v in node.values
        )
    return None


def is_program(text: str) -> bool:
    """Three statements or more (lines, or `;`-separated) with an import, a def or a class."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return False
    statements = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)]
    return len(statements) >= 3 and any(isinstance(s, PROGRAM_STATEMENTS) for s in statements)


def _owners(tree: ast.Module) -> dict[int, str]:
    """Each node's id to the name it is held by: the assigned name, else the function."""
    owner: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = node.name
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = next((t.id for t in targets if isinstance(t, ast.Name)), name)
        owner[id(node)] = name
        for child in ast.iter_child_nodes(node):
            visit(child, name)

    visit(tree, "<module>")
    return owner


def programs_in_strings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, holder) of each string that is a Python program (docstrings are not)."""
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skip.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.JoinedStr):
            skip |= {id(value) for value in node.values}  # parts of an f-string, read whole
    owners = _owners(tree)
    for node in ast.walk(tree):
        text = _text(node)
        if text is not None and id(node) not in skip and is_program(text):
            yield getattr(node, "lineno", 0), owners[id(node)]


def test_no_python_program_is_kept_in_a_string() -> None:
    found = []
    for rel, tree in _sources():
        for line, holder in programs_in_strings(tree):
            if f"{rel}:{holder}" not in PROGRAMS_THAT_STAY:
                found.append(f"{rel}:{line} ({holder})")
    assert not found, (
        "a Python program kept in a string: make it a module (envkit/runtime/ for what runs in "
        "the image; for the checks bundle, a module of envkit/checks/ whose text "
        "pkgutil.get_data reads, from the zip too) and ship or run the file:\n" + "\n".join(found)
    )


def test_every_program_that_stays_in_a_string_is_still_there() -> None:
    held = {
        f"{rel}:{holder}" for rel, tree in _sources() for _, holder in programs_in_strings(tree)
    }
    assert set(PROGRAMS_THAT_STAY) <= held, set(PROGRAMS_THAT_STAY) - held


def test_the_program_finder_sees_one_liners_and_f_strings_not_prose() -> None:
    source = textwrap.dedent(
        '''
        """import this: a docstring is prose."""
        ONE_LINE = "import sys; x = sys.argv[1]; print(x)"
        def probe(path: str) -> str:
            return f"""
        import json
        data = json.load(open({path!r}))
        print(data["version"])
        """
        SHELL = "set -eu\\napt-get update\\napt-get install -y git\\n"
        SHORT = "import sys; sys.exit(0)"
        '''
    )
    assert list(programs_in_strings(ast.parse(source))) == [(3, "ONE_LINE"), (5, "probe")]
