"""Secrets are never stored: credentials are refused, named, and nothing is written.

The second half pins ordinary job-search sentences that must NOT be refused. The labelled
sets and the check that each of karani's own rules is needed are in test_credentials_labelled.
"""

import pytest
from credential_cases import CREDENTIALS, DISGUISED, ORDINARY
from ledger_helpers import counts

from memory import credentials, prose_rules, scanner, services
from memory.errors import SecretRefused

pytestmark = pytest.mark.django_db


@pytest.fixture
def ledger_with_one_fact():
    services.remember(text="Already here")
    return counts()


@pytest.mark.parametrize(("text", "detected"), CREDENTIALS)
def test_it_refuses_a_credential_naming_what_it_found(ledger_with_one_fact, text, detected):
    with pytest.raises(SecretRefused) as caught:
        services.remember(text=f"note: {text}")
    message = str(caught.value)
    assert detected in message, message
    assert "\n" not in message and "nothing was stored" in message
    # The secret itself is never echoed back.
    assert text not in message
    assert counts() == ledger_with_one_fact


def test_it_refuses_a_credential_in_the_ref_too(ledger_with_one_fact):
    with pytest.raises(SecretRefused, match=r"ref looks like it contains a credential"):
        services.remember(text="Fine text", ref="token=abcd1234efgh5678")
    assert counts() == ledger_with_one_fact


def test_it_refuses_a_credential_even_when_the_text_is_a_duplicate(ledger_with_one_fact):
    services.remember(text="Interview portal login")
    before = counts()
    with pytest.raises(SecretRefused):
        services.remember(text="Interview portal login password=hunter22")
    assert counts() == before


def test_it_refuses_a_correction_carrying_a_credential(ledger_with_one_fact):
    fact = services.remember(text="Portal login is shared by the recruiter")
    before = counts()
    with pytest.raises(SecretRefused, match="Secret Keyword"):
        services.correct(id=fact.id, text="Portal password: hunter22", reason="more detail")
    assert counts() == before
    from memory.models import Memory

    assert Memory.objects.get(pk=fact.id).deleted_at is None


def test_it_refuses_secrets_in_import_lines_but_keeps_the_rest(ledger_with_one_fact):
    report = services.import_facts(
        records=[(1, {"text": "fine one"}), (2, {"text": "mysql://root:toor@db/x"})]
    )
    assert report.created == 1
    assert [n for n, _ in report.rejected] == [2]
    assert "Connection String Password" in report.rejected[0][1]


@pytest.mark.parametrize(("text", "detected"), DISGUISED)
def test_it_sees_through_look_alike_letters(ledger_with_one_fact, text, detected):
    assert not _unfolded(text), "the rules catch it without folding the look-alikes"
    with pytest.raises(SecretRefused, match=detected):
        services.remember(text=f"note: {text}")
    assert counts() == ledger_with_one_fact


def test_it_detects_through_zero_width_characters():
    # The ledger drops these before the screen reads the text; the screen must not rely on it.
    assert credentials.find_secrets("my pass\u200bword is hunter\u200d22")


def test_it_stores_the_text_as_sent_not_as_normalised():
    text = "Ｆｕｌｌｗｉｄｔｈ note from the Ｋｙｉｖ office"
    assert services.remember(text=text).memory.text == text


@pytest.mark.parametrize("text", ORDINARY)
def test_it_stores_ordinary_job_search_sentences(text):
    assert credentials.find_secrets(text) == []
    assert services.remember(text=text).created


def _unfolded(text: str) -> list[str]:
    return [span.kind for span in scanner.scan(text) + prose_rules.find(text)]


def test_it_allows_a_commit_sha_and_still_refuses_a_hex_secret_named_beside_it():
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    assert credentials.find_secrets(f"their take-home repo is at commit {sha}") == []
    assert credentials.find_secrets(f"the webhook secret is {sha}")
