"""No field qualify stores holds a credential: postings, the profile and outcome notes are
refused with one line through every door that writes them (import, commands, admin), and the
model's words and error messages are stored with the credential withheld."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from qualify_fakes import Raw, criteria, make_posting

from memory.models import Memory
from qualify import services
from qualify.credentials import WITHHELD
from qualify.models import Company, Outcome, Posting, Profile, Qualification

pytestmark = pytest.mark.django_db

GITHUB_TOKEN = "ghp_R2d4f6h8j0k2m4n6p8r0t2v4x6z8b0d2f4h6"
AWS_KEY = "AKIAZ3MHXQ7RN4VPL2KD"
PASSWORD = "portal password: Tr0ub4dor&3xyz!"


def _call(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _stored_anywhere(secret: str) -> bool:
    """Whether any qualify or memory row holds ``secret`` in any field."""
    rows = [
        *Company.all_objects.values(),
        *Posting.all_objects.values(),
        *Profile.all_objects.values(),
        *Qualification.all_objects.values(),
        *Outcome.objects.values(),
        *Memory.all_objects.values(),
    ]
    return secret in json.dumps(rows, default=str)


@pytest.mark.parametrize(
    ("field", "value", "kind"),
    [
        ("description", f"Apply with the token {GITHUB_TOKEN}", "github-pat"),
        ("salary", "90k; api_key=sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "Secret Keyword"),
        ("company", f"Initech {AWS_KEY}", "AWS Access Key"),
        ("dealbreakers", ["relocation", PASSWORD], "Secret Keyword"),
    ],
)
def test_import_refuses_a_posting_holding_a_credential_and_imports_the_rest(
    tmp_path, field, value, kind
):
    good = {"company": "Globex", "title": "SRE", "url": "https://jobs.example.com/a"}
    bad = {"company": "Globex", "title": "Platform engineer", "url": "https://jobs.example.com/b"}
    bad[field] = value
    path = tmp_path / "postings.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (good, bad)) + "\n")

    out, err = _call("postings", "import", str(path))

    assert out.strip() == "created 1, duplicates 0, rejected 1"
    line = err.strip()
    assert line.startswith(f"line 2: refused: {field} looks like it contains a credential (")
    assert kind in line and line.endswith("nothing was stored")
    assert list(Posting.objects.values_list("title", flat=True)) == ["SRE"]
    assert not _stored_anywhere(value if isinstance(value, str) else PASSWORD)


@pytest.mark.parametrize(
    ("option", "field"),
    [("--summary", "summary"), ("--preferences", "preferences"), ("--dealbreaker", "dealbreakers")],
)
def test_profile_refuses_a_credential_in_any_field_in_one_line(profile, option, field):
    before = Profile.objects.values().get()

    with pytest.raises(CommandError) as exc:
        _call("profile", "set", option, f"Remote only, {PASSWORD}")

    assert str(exc.value) == (
        f"refused: {field} looks like it contains a credential (Secret Keyword); nothing was stored"
    )
    assert Profile.objects.values().get() == before
    assert not _stored_anywhere("Tr0ub4dor")


def test_an_outcome_note_holding_a_credential_records_nothing(profile):
    posting = make_posting()

    with pytest.raises(CommandError, match=r"^refused: note looks like it contains a credential"):
        _call("outcome", str(posting.pk), "applied", "--note", f"logged in with {PASSWORD}")

    assert Outcome.objects.count() == 0 and Memory.all_objects.count() == 0
    assert not _stored_anywhere("Tr0ub4dor")


def test_the_models_reasons_are_stored_with_the_credential_withheld(
    llm_settings, fake_llm, profile
):
    posting = make_posting()
    fake_llm.queue(criteria(reasons=f"send the recruiter {GITHUB_TOKEN}"))

    _call("qualify")

    q = Qualification.objects.get(posting=posting)
    assert (q.verdict, q.fit_score) == ("qualified", 80)  # the decision itself is kept
    assert q.reasons == WITHHELD and q.criteria["reasons"] == WITHHELD
    assert q.criteria["remote_ok"] == "yes"
    assert not _stored_anywhere(GITHUB_TOKEN)


def test_an_error_quoting_a_credential_keeps_what_failed_and_withholds_the_rest(
    llm_settings, fake_llm, profile
):
    posting = make_posting()
    # The schema violation quotes the value: "'AKIA…' is not one of ['yes', 'no', 'unknown']".
    bad = Raw(json.dumps(criteria(remote_ok=AWS_KEY)))
    fake_llm.queue(bad, bad)

    _call("qualify")

    q = Qualification.objects.get(posting=posting)
    assert q.verdict is None
    assert q.error == f"invalid model output after one retry: {WITHHELD}"
    assert not _stored_anywhere(AWS_KEY)


def test_the_admin_refuses_a_credential_on_the_profile_and_a_posting(admin_client, profile):
    before = Profile.objects.values().get()
    response = admin_client.post(
        reverse("admin:qualify_profile_change", args=[profile.pk]),
        {"summary": "Staff engineer", "preferences": PASSWORD, "dealbreakers": "[]"},
    )
    assert response.status_code == 200  # the form again, with the error on the field
    assert response.context["adminform"].form.errors["preferences"] == [
        "refused: preferences looks like it contains a credential (Secret Keyword); "
        "nothing was stored"
    ]
    assert Profile.objects.values().get() == before

    posting = make_posting()
    url = reverse("admin:qualify_posting_change", args=[posting.pk])
    form = {
        "company": posting.company_id,
        "title": posting.title,
        "remote": posting.remote,
        "description": f"Ask for {GITHUB_TOKEN}",
        "dealbreakers": "[]",
    }
    response = admin_client.post(url, form)
    assert response.status_code == 200
    assert "description" in response.context["adminform"].form.errors
    assert not _stored_anywhere(GITHUB_TOKEN)

    # The same form without the token saves: the check refuses credentials, not edits.
    form["description"] = "Ask for the team lead"
    assert admin_client.post(url, form).status_code == 302
    assert Posting.objects.get(pk=posting.pk).description == "Ask for the team lead"


def test_services_refuse_the_same_way(profile):
    with pytest.raises(services.QualifyError, match="refused: summary looks like"):
        services.set_profile(summary=f"Engineer; {PASSWORD}")
    report = services.import_postings(
        records=[(7, {"company": "Acme", "title": f"SRE {GITHUB_TOKEN}"})]
    )
    assert report.created == 0
    assert report.rejected[0][0] == 7 and "title looks like it contains" in report.rejected[0][1]
