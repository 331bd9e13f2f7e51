"""The commands end to end: profile, qualify (summary), outcome, with one-line errors."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from qualify_fakes import criteria, make_posting

from qualify.models import Outcome, Profile, Qualification

pytestmark = pytest.mark.django_db


def _call(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_sets_and_shows_the_profile(db):
    _call("profile", "set", "--summary", "Backend engineer", "--dealbreaker", "relocation")
    _call("profile", "set", "--preferences", "remote only")

    out, _ = _call("profile", "show", "--json")

    payload = json.loads(out)
    assert (payload["summary"], payload["preferences"], payload["dealbreakers"]) == (
        "Backend engineer",
        "remote only",
        ["relocation"],
    )
    assert Profile.objects.count() == 1


def test_it_needs_a_summary_for_the_first_profile(db):
    with pytest.raises(CommandError, match="the first profile needs a summary"):
        _call("profile", "set", "--preferences", "remote")


def test_it_qualifies_pending_postings_and_prints_a_summary(llm_settings, fake_llm, profile):
    for i in range(3):
        make_posting(title=f"SRE {i}")
    fake_llm.queue(criteria(), criteria(remote_ok="no"), criteria())

    out, _ = _call("qualify", "--limit", "2")

    assert out.startswith("qualified 1, rejected 1, errors 0, skipped 0 (of 2)")
    out, _ = _call("qualify", "--json")
    assert json.loads(out)["total"] == 1
    out, _ = _call("qualify")
    assert out.strip() == "nothing to qualify: every live posting has a verdict"
    assert Qualification.objects.count() == 3


def test_it_qualifies_one_posting_and_refuses_to_do_it_twice(llm_settings, fake_llm, profile):
    posting = make_posting()

    _call("qualify", "--posting", str(posting.pk))

    with pytest.raises(CommandError, match=f"posting {posting.pk} already has a verdict"):
        _call("qualify", "--posting", str(posting.pk))
    with pytest.raises(CommandError, match="no posting with id 999"):
        _call("qualify", "--posting", "999")


def test_it_records_an_outcome(llm_settings, fake_llm, profile):
    posting = make_posting()
    _call("qualify")

    out, _ = _call("outcome", str(posting.pk), "applied", "--note", "via referral", "--json")

    payload = json.loads(out)
    assert (payload["stage"], payload["fact_written"]) == ("applied", True)
    assert Outcome.objects.get().note == "via referral"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["999", "applied"], "no posting with id 999"),
        (["1", "ghosted"], "invalid choice: 'ghosted'"),
    ],
)
def test_it_refuses_bad_outcomes_in_one_line(db, args, message):
    with pytest.raises(CommandError, match=message) as exc:
        _call("outcome", *args)
    assert "\n" not in str(exc.value)
