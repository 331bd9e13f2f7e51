"""`postings import FILE`: JSON, JSONL or CSV; bad rows reported by line, the rest imported,
re-importing adds nothing."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from qualify.models import Company, Posting

pytestmark = pytest.mark.django_db

JSON_FILE = """[
  {"company": "Northwind Robotics", "title": "Senior SRE", "role_category": "sre",
   "remote": "remote", "url": "https://jobs.example.com/1",
   "dealbreakers": ["on-call 24/7"]},
  {"company": "Northwind Robotics", "title": ""},
  {"company": "northwind  robotics", "title": "Platform Engineer",
   "url": "https://jobs.example.com/2"},
  {"company": "Contoso", "title": "Data Engineer", "remote": "sometimes"},
  {"company": "Contoso", "title": "ML Engineer", "colour": "blue"},
  "just a string",
  {"company": "Contoso", "title": "Backend Engineer", "url": "ftp://x"}
]
"""


def _import(path, *args):
    out, err = StringIO(), StringIO()
    call_command("postings", "import", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_imports_good_rows_and_reports_bad_ones_by_line(tmp_path):
    path = tmp_path / "postings.json"
    path.write_text(JSON_FILE)

    out, err = _import(path)

    assert out.strip() == "created 2, duplicates 0, rejected 5"
    assert err.splitlines() == [
        "line 5: title is missing",
        "line 8: remote 'sometimes' names no policy: start it with remote, hybrid or onsite,"
        " e.g. 'Hybrid (2 days)'",
        "line 9: unknown field(s): colour",
        "line 10: each posting must be an object",
        "line 11: url 'ftp://x' is not an http(s) URL",
    ]
    # One company, whatever the spacing and case.
    assert list(Company.objects.values_list("name", flat=True)) == ["Northwind Robotics"]
    sre = Posting.objects.get(title="Senior SRE")
    assert (sre.remote, sre.dealbreakers) == ("remote", ["on-call 24/7"])


def test_it_skips_postings_already_imported(tmp_path):
    path = tmp_path / "postings.json"
    path.write_text(JSON_FILE)
    _import(path)

    out, _ = _import(path, "--json")

    report = json.loads(out)
    assert (report["created"], report["duplicates"], report["rejected"]) == (0, 2, 5)
    assert Posting.objects.count() == 2


def test_it_imports_csv_with_bad_rows_by_line(tmp_path):
    path = tmp_path / "postings.csv"
    path.write_text(
        "company,title,role_category,remote,description,dealbreakers\n"
        'Fabrikam,SRE,sre,hybrid,"two\nlines",relocation; US citizens only\n'
        ",Orphan,,,,\n"
        "Tailspin,Backend Engineer,backend,remote,,\n"
        "Tailspin,Too,many,remote,,,extra\n"
    )

    out, err = _import(path)

    assert out.strip() == "created 2, duplicates 0, rejected 2"
    assert err.splitlines() == [
        "line 4: company is missing",
        "line 6: more cells than the header has columns",
    ]
    sre = Posting.objects.get(title="SRE")
    assert sre.dealbreakers == ["relocation", "US citizens only"]
    assert sre.description == "two\nlines"


def test_it_imports_jsonl_and_reports_unparseable_lines(tmp_path):
    path = tmp_path / "postings.jsonl"
    path.write_text(
        '{"company": "A", "title": "SRE"}\n{"company": "B", "title": \n\n{"company": "C"}\n'
    )

    out, err = _import(path)

    assert out.strip() == "created 1, duplicates 0, rejected 2"
    assert err.splitlines()[0].startswith("line 2: not valid JSON")
    assert err.splitlines()[1] == "line 4: title is missing"


def test_it_refuses_a_broken_json_file_whole_with_its_line(tmp_path):
    path = tmp_path / "postings.json"
    path.write_text('[\n {"company": "A", "title": "SRE"},\n {"company": \n]')

    with pytest.raises(CommandError, match=r"^line 4: not valid JSON .*nothing was imported"):
        _import(path)
    assert Posting.objects.count() == 0


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("p.txt", "x", "use a .json, .jsonl or .csv file"),
        ("p.json", '{"company": "A"}', "must hold one JSON array"),
    ],
)
def test_it_refuses_files_it_cannot_read(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)

    with pytest.raises(CommandError, match=message):
        _import(path)


def test_it_says_when_the_file_is_missing(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        _import(tmp_path / "nope.json")


def test_a_remote_policy_as_boards_write_it_keeps_its_detail_in_the_location(tmp_path):
    path = tmp_path / "postings.jsonl"
    rows = [
        {
            "company": "Globex",
            "title": "Backend",
            "location": "Chicago",
            "remote": "Hybrid (3 days)",
        },
        {"company": "Globex", "title": "Data", "remote": "Remote - US"},
        {"company": "Globex", "title": "SRE", "remote": "On-site"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))

    out, err = _import(path)

    assert (out.strip(), err) == ("created 3, duplicates 0, rejected 0", "")
    got = {p.title: (p.remote, p.location) for p in Posting.objects.all()}
    assert got == {
        "Backend": ("hybrid", "Chicago (3 days)"),
        "Data": ("remote", "US"),
        "SRE": ("onsite", ""),
    }
