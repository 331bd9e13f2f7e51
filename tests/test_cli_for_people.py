"""A CLI that speaks to a person (issue 44): each command's help shows karani's own arguments
and options, each explained, and none of Django's; the command list says what is true; every
failure has one prefix; refusals name what to do next; exports name who wrote each fact."""

import argparse
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command, get_commands, load_command_class
from ledger_helpers import child_env, karani, one_line_error

from memory.management.base import DJANGO_OPTIONS
from memory.models import Memory

KARANI_APPS = {"memory", "qualify"}
DJANGO_WORDS = ["--settings", "--pythonpath", "--traceback", "--verbosity", "-v {", "--no-color"]


def _karani_commands() -> list[str]:
    return sorted(name for name, app in get_commands().items() if app in KARANI_APPS)


def _actions(parser: argparse.ArgumentParser):
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _actions(sub)


@pytest.mark.parametrize("name", _karani_commands())
def test_every_argument_and_option_of_a_karani_command_has_help(name):
    command = load_command_class(get_commands()[name], name)
    parser = command.create_parser("karani", name)
    for action in _actions(parser):
        if DJANGO_OPTIONS & set(action.option_strings):
            assert action.help == argparse.SUPPRESS, (name, action.option_strings)
        else:
            assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)
    text = parser.format_help()
    assert not [word for word in DJANGO_WORDS if word in text], text


def _run(*args: str, tmp_path):
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(tmp_path))
    return karani(*args, cwd=tmp_path, env=env)


def test_karani_help_correct_is_karanis_own(tmp_path):
    shown = _run("help", "correct", tmp_path=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert not [word for word in DJANGO_WORDS if word in shown.stdout], shown.stdout
    assert "the id of the fact to correct" in shown.stdout
    assert "usage: karani correct [-h] --reason REASON [--json] id text" in shown.stdout


def test_the_command_list_and_the_mcp_help_name_the_servers_real_tools(tmp_path):
    listed = _run("--help", tmp_path=tmp_path).stdout
    mcp_line = next(line for line in listed.splitlines() if line.strip().startswith("mcp "))
    assert "remember, recall)" not in mcp_line  # the old list, two of the five tools
    shown = _run("help", "mcp", tmp_path=tmp_path).stdout
    # What a real MCP client lists (tests/test_mcp_server.py), memory's and qualify's.
    assert "tools: remember, recall, context, record_decision, record_outcome" in shown


@pytest.mark.parametrize(
    "args",
    [
        ["correct"],  # argparse's refusal
        ["correct", "7", "new text", "--reason", "r"],  # the ledger is not set up yet
        ["recall", "x", "--limit", "0"],  # the service's refusal
        ["nosuchcommand"],  # the console script's own
    ],
    ids=" ".join,
)
def test_every_failure_has_the_one_prefix(args, tmp_path):
    line = one_line_error(_run(*args, tmp_path=tmp_path))
    assert line.startswith("karani: ") and "CommandError" not in line, line


@pytest.mark.django_db
def test_correcting_a_corrected_fact_names_its_successor():
    out = StringIO()
    call_command("remember", "Prefers remote roles", "--json", stdout=out)
    first = json.loads(out.getvalue())["id"]
    out = StringIO()
    call_command(
        "correct", str(first), "Prefers hybrid roles", "--reason", "r1", "--json", stdout=out
    )
    successor = json.loads(out.getvalue())["id"]
    with pytest.raises(
        CommandError, match=rf"fact {first} was already corrected by fact {successor}"
    ):
        call_command("correct", str(first), "Prefers on-site roles", "--reason", "r2")


@pytest.mark.django_db
def test_an_export_names_the_cli_as_the_writer_of_its_facts():
    call_command("remember", "Initech pays in euros", stdout=StringIO())
    fact = Memory.objects.get()
    call_command("forget", str(fact.pk), "--reason", "wrong company", stdout=StringIO())
    out = StringIO()
    call_command("export", stdout=out)
    row = json.loads(out.getvalue().splitlines()[0])
    assert (row["created_by"], row["deleted_by"]) == ("cli", "cli")


def test_the_command_list_lists_every_karani_command_even_one_without_a_group(monkeypatch, capsys):
    from karani_site import cli

    groups = {group: tuple(n for n in names if n != "list") for group, names in cli.GROUPS.items()}
    monkeypatch.setattr(cli, "GROUPS", groups)
    cli._print_help()
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line[:2] == "  "}
    assert set(_karani_commands()) <= listed
