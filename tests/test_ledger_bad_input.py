"""Bad input to remember(): one clear one-line error, and nothing written."""

import pytest
from ledger_helpers import counts

from memory import selectors, services
from memory.errors import MemoryInputError

pytestmark = pytest.mark.django_db


@pytest.fixture
def ledger_with_one_fact():
    services.remember(text="Already here", company="Acme")
    return counts()


def _refused(expected: str, **kwargs) -> str:
    kwargs.setdefault("text", "A perfectly fine fact")
    with pytest.raises(MemoryInputError) as caught:
        services.remember(**kwargs)
    message = str(caught.value)
    assert "\n" not in message
    assert expected in message, message
    return message


@pytest.mark.parametrize("text", ["", " ", "   \n\t  ", "\n"])
def test_it_refuses_empty_or_whitespace_text(ledger_with_one_fact, text):
    _refused("text is empty", text=text)
    assert counts() == ledger_with_one_fact


def test_it_refuses_text_over_2000_characters_naming_the_limit(ledger_with_one_fact):
    message = _refused("limit is 2000", text="x" * 2001)
    assert "2001" in message
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        # The limit counts the text as sent (a schema's maxLength does), not as normalised.
        ("text", "x" * 1000 + "\r\n" + "x" * 999, "text is 2001 characters; the limit is 2000"),
        ("text", "\ufeff" + "x" * 2000, "text is 2001 characters; the limit is 2000"),
        ("ref", "r" * 100 + "  " + "r" * 99, "ref is 201 characters; the limit is 200"),
        ("company", "A" * 100 + "  " + "A" * 99, "company is longer than 200 characters"),
        # NFC lengthens U+FB2C to three code points: the stored text counts too.
        ("text", "\ufb2c" * 700, "text is 2100 characters; the limit is 2000"),
    ],
)
def test_it_counts_a_text_as_sent_and_as_stored(ledger_with_one_fact, field, value, expected):
    message = _refused(expected, **{field: value})
    assert message == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("null\x00byte", "text contains a control character U+0000 at position 5; remove it"),
        ("bell\x07", "text contains a control character U+0007 at position 5; remove it"),
        ("escape \x1b[31mred", "text contains a control character U+001B at position 8"),
        ("delete\x7f", "text contains a control character U+007F at position 7"),
        # NEL is a C1 control here: in real text it is mostly cp1252's ellipsis misread.
        ("c1 control\x85", "text contains a control character U+0085 at position 11"),
        ("bidi override \u202e", "text contains a bidi control U+202E at position 15"),
        ("an isolate \u2066x\u2069", "text contains a bidi control U+2066 at position 12"),
        ("tag \U000e0041", "text contains an invisible format character U+E0041 at position 5"),
        ("private \ue000", "text contains a private-use character U+E000 at position 9"),
        ("lone \ud800", "text contains a lone surrogate U+D800 at position 6"),
        ("nonchar \ufdd0", "text contains a noncharacter U+FDD0 at position 9"),
        ("plane end \U0010ffff", "text contains a noncharacter U+10FFFF at position 11"),
    ],
)
def test_it_refuses_nul_and_other_invalid_characters_with_the_one_message(
    ledger_with_one_fact, text, expected
):
    _refused(expected, text=text)
    assert counts() == ledger_with_one_fact


def test_it_takes_a_code_point_this_unicode_has_not_assigned_yet(ledger_with_one_fact):
    # A newer Unicode assigns them (U+0378 stays open; U+1FAE8, a shaking face, came in 15.0
    # after this Python's 14.0): refusing them would refuse tomorrow's letters and emoji.
    for text in ("unassigned \u0378", "shaking face \U0001fae8"):
        assert services.remember(text=text).memory.text == text


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("carriage\rreturn", "carriage\nreturn"),
        ("windows\r\nline", "windows\nline"),
        (
            "word's\x0bbreak and\x0cpage \u2028line \u2029para",
            "word's\nbreak and\npage \nline \npara",
        ),
        ("tab\there", "tab here"),
        (
            "no\u00a0break, narrow\u202fno-break, thin\u2009space",
            "no break, narrow no-break, thin space",
        ),
        ("soft\u00adhyphen", "softhyphen"),
        ("\ufeffBOM first", "BOM first"),
        ("zero width \u200b space", "zero width  space"),
        ("a joiner inside ASCII: re\u200dmote", "a joiner inside ASCII: remote"),
        ("a joiner at the end \U0001f469\u200d", "a joiner at the end \U0001f469"),
        ("\u200c a non-joiner after a space", "a non-joiner after a space"),
        ("marks \u200eLTR\u200f", "marks LTR"),
    ],
)
def test_it_stores_line_breaks_spaces_and_invisible_characters_normalised(text, stored):
    result = services.remember(text=text)
    assert selectors.get_fact(id=result.id).text == stored


@pytest.mark.parametrize(
    "text",
    [
        "Wants \U0001f469\u200d\U0001f4bb roles",  # woman technologist: woman + ZWJ + laptop
        "Persian: \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # mi-khaham, with a ZWNJ
        "Hindi: \u0915\u094d\u200d\u0937",  # a half form, with a ZWJ
    ],
)
def test_it_keeps_joiners_that_build_emoji_and_words(text):
    result = services.remember(text=text)
    assert result.created is True
    assert selectors.get_fact(id=result.id).text == text


@pytest.mark.parametrize("text", [None, 42, b"bytes", ["list"]])
def test_it_refuses_text_that_is_not_a_string(ledger_with_one_fact, text):
    _refused("text must be a string", text=text)
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize("kind", ["opinion", "Note", "", None, 1])
def test_it_refuses_an_unknown_kind_and_lists_the_known_ones(ledger_with_one_fact, kind):
    message = _refused("unknown kind", kind=kind)
    assert "preference, outcome, question, note" in message
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize("source", ["rumour", "TEACH", "", None])
def test_it_refuses_an_unknown_source_and_lists_the_known_ones(ledger_with_one_fact, source):
    message = _refused("unknown source", source=source)
    assert "verdict, outcome, teach, correction, import" in message
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize("score", [-1, 101, 1000, -100])
def test_it_refuses_a_fit_score_outside_0_to_100(ledger_with_one_fact, score):
    _refused(f"fit score {score} is outside 0-100", fit_score=score)
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize("score", [True, False, "50", 50.0, 7.5, [50]])
def test_it_refuses_a_fit_score_that_is_not_a_whole_number(ledger_with_one_fact, score):
    _refused("fit score must be a whole number from 0 to 100", fit_score=score)
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize("company", ["", "   ", "\n\t", "\u00a0\u2003"])
def test_it_refuses_a_company_that_normalises_to_empty(ledger_with_one_fact, company):
    _refused("company name is empty after normalisation", company=company)
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize("company", [42, ["Acme"], b"Acme"])
def test_it_refuses_a_company_that_is_not_a_string(ledger_with_one_fact, company):
    _refused("company must be a string", company=company)
    assert counts() == ledger_with_one_fact


def test_it_refuses_control_characters_in_the_company(ledger_with_one_fact):
    _refused("company contains a control character U+0000 at position 5", company="Acme\x00")
    assert counts() == ledger_with_one_fact


def test_it_refuses_a_company_name_over_200_characters(ledger_with_one_fact):
    _refused("company is longer than 200 characters", company="A" * 201)
    assert counts() == ledger_with_one_fact


def test_it_refuses_a_company_whose_key_grows_past_the_column_when_casefolded(
    ledger_with_one_fact,
):
    # "ß" casefolds to "ss": 150 characters as written, 300 as a key.
    _refused("company is longer than 200 characters", company="ß" * 150)
    assert counts() == ledger_with_one_fact


def test_it_refuses_a_ref_over_200_characters(ledger_with_one_fact):
    _refused("ref is 201 characters", ref="r" * 201)
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize("ref", ["  ", 123, "qualification:\x00"])
def test_it_refuses_a_blank_non_string_or_control_character_ref(ledger_with_one_fact, ref):
    _refused("ref", ref=ref)
    assert counts() == ledger_with_one_fact


def test_it_validates_everything_before_any_write_even_for_a_duplicate(ledger_with_one_fact):
    # The live twin exists, yet a bad field still refuses the touch.
    _refused("unknown kind", text="Already here", company="Acme", kind="opinion")
    assert counts() == ledger_with_one_fact
    from memory.models import Memory

    assert Memory.objects.get().seen_count == 1


def test_validate_fact_checks_without_writing(ledger_with_one_fact):
    fact = services.validate_fact(text="  Fine  ", company=" ACME ")
    assert (fact.text, fact.company, fact.company_key) == ("Fine", "ACME", "acme")
    with pytest.raises(MemoryInputError):
        services.validate_fact(text="")
    assert counts() == ledger_with_one_fact


# --- every free-text field refuses a credential (issue 14, item 1) ------------------------


def test_it_refuses_a_credential_in_the_company(ledger_with_one_fact):
    message = _refused(
        "refused: company looks like it contains a credential",
        company="sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    )
    assert "sk_live" not in message
    assert counts() == ledger_with_one_fact


@pytest.mark.parametrize("operation", ["forget", "correct"])
def test_it_refuses_a_credential_in_a_reason_and_leaves_the_fact_live(operation):
    fact = services.remember(text="Portal login is shared by the recruiter")
    before = counts()
    kwargs = {"id": fact.id, "reason": "new login: password=hunter22"}
    if operation == "correct":
        kwargs["text"] = "Portal login is in the password manager"
    with pytest.raises(MemoryInputError, match="reason looks like it contains a credential"):
        getattr(services, operation)(**kwargs)
    assert counts() == before
    assert selectors.get_fact(id=fact.id).deleted_at is None


@pytest.mark.parametrize(
    ("actor", "expected"),
    [
        ("alice\x1b[2J", "actor contains a control character U+001B at position 6"),
        ("ghp_1234567890abcdefghijABCDEFGHIJ123456", "actor looks like it contains a credential"),
        (42, "actor must be a string"),
    ],
)
def test_it_refuses_an_actor_no_one_could_be(ledger_with_one_fact, actor, expected):
    _refused(expected, actor=actor)
    assert counts() == ledger_with_one_fact
