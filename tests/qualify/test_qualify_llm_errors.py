"""The LLM contract: schema-validated JSON, one retry on invalid output, then an error row;
bounded timeouts; a missing endpoint stops before any request."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from qualify_fakes import Raw, Slow, criteria, make_posting, run_qualify

from memory import services as memory
from qualify import services
from qualify.llm import LLMNotConfigured
from qualify.models import Qualification

# The endpoint's contract is the same whatever the ledger: one pass is enough.
pytestmark = [pytest.mark.django_db, pytest.mark.one_pass]


def test_it_retries_once_on_invalid_json_and_then_succeeds(llm_settings, fake_llm, profile):
    make_posting()
    fake_llm.queue(Raw("Sure! The verdict is: qualified"), criteria(role_fit=90))

    run_qualify()

    assert len(fake_llm.requests) == 2
    retry = fake_llm.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "Sure! The verdict is: qualified"}
    assert retry[-1]["content"].startswith("Your reply was not valid: the reply is not JSON")
    q = Qualification.objects.get()
    assert (q.verdict, q.fit_score, q.error) == ("qualified", 90, "")


def test_it_records_an_error_after_the_retry_is_invalid_too(llm_settings, fake_llm, profile):
    make_posting()
    fake_llm.queue(Raw("not json"), {"verdict": "qualified"})  # JSON, but not the schema

    summary = run_qualify()

    assert len(fake_llm.requests) == 2
    q = Qualification.objects.get()
    assert q.verdict is None and q.fit_score is None
    assert q.error.startswith("invalid model output after one retry: schema violation")
    assert summary.errors == 1
    # An error is not a verdict: no fact is written, and the next run tries the posting again.
    assert not [m for m in memory.iter_all_facts() if m.source == "verdict"]
    assert len(services.pending_postings()) == 1


def test_it_rejects_out_of_range_scores_as_invalid(llm_settings, fake_llm, profile):
    make_posting()
    fake_llm.queue(criteria(role_fit=140), criteria(role_fit=100))

    run_qualify()

    assert "role_fit" in fake_llm.requests[1]["messages"][-1]["content"]
    assert Qualification.objects.get().fit_score == 100


def test_it_stops_with_one_line_before_any_call_when_no_endpoint_is_set(
    llm_settings, fake_llm, profile
):
    llm_settings.KARANI_LLM_BASE_URL = ""
    make_posting()

    with pytest.raises(CommandError) as exc:
        call_command("qualify", stdout=StringIO(), stderr=StringIO())

    message = str(exc.value)
    assert "KARANI_LLM_BASE_URL is not set" in message and "\n" not in message
    assert fake_llm.requests == []
    assert Qualification.objects.count() == 0


def test_it_refuses_an_endpoint_that_is_not_an_http_url(llm_settings, fake_llm, profile):
    llm_settings.KARANI_LLM_BASE_URL = "127.0.0.1:8080"

    with pytest.raises(LLMNotConfigured, match="is not an http"):
        services.prepare_batch()
    assert fake_llm.requests == []


def test_it_stops_before_any_call_without_a_profile(llm_settings, fake_llm):
    make_posting()

    with pytest.raises(CommandError, match="no candidate profile"):
        call_command("qualify", stdout=StringIO(), stderr=StringIO())
    assert fake_llm.requests == []


def test_it_bounds_a_hung_endpoint_by_the_timeout(llm_settings, fake_llm, profile):
    llm_settings.KARANI_LLM_TIMEOUT = 1.0
    make_posting()
    fake_llm.queue(Slow(3), Slow(3))  # the client's one transport retry hangs too

    run_qualify()

    q = Qualification.objects.get()
    assert q.error == "LLM endpoint timed out after 1s"
    assert q.latency_ms < 3000 * 2


def test_it_stops_the_batch_after_three_endpoint_failures_in_a_row(llm_settings, profile):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm_settings.KARANI_LLM_BASE_URL = f"http://127.0.0.1:{port}/v1"
    for i in range(6):
        make_posting(title=f"SRE {i}")

    summary = run_qualify()

    assert summary.errors == 3
    assert summary.stopped.startswith("stopped after 3 endpoint failures in a row")
    assert all(
        e.startswith("LLM endpoint unreachable")
        for e in Qualification.objects.values_list("error", flat=True)
    )


def test_it_exits_non_zero_when_the_batch_stopped_on_a_dead_endpoint(llm_settings, profile):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm_settings.KARANI_LLM_BASE_URL = f"http://127.0.0.1:{port}/v1"
    for i in range(4):
        make_posting(title=f"SRE {i}")
    out = StringIO()

    with pytest.raises(CommandError, match=r"^stopped after 3 endpoint failures in a row"):
        call_command("qualify", stdout=out, stderr=StringIO())

    assert "errors 3, skipped 0 (of 4)" in out.getvalue()
    assert "last error: LLM endpoint unreachable" in out.getvalue()
