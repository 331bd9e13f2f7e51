"""`/api/context`: the working-context block an outside pipeline puts into its prompt, built
by the same code as qualify's own (company plus global facts, at most 10, each with why), the
holdout arm drawn from the posting's external id."""

import pytest
from api_helpers import client_with, error_of, token_for
from ledger_helpers import counts

from memory import services as memory
from qualify import holdout, prompts
from qualify.models import Arm, Posting

GITHUB = "ghp_1234567890abcdefghijABCDEFGHIJ123456"


pytestmark = pytest.mark.usefixtures("fresh_salt")


@pytest.fixture
def ledger(db, settings):
    settings.KARANI_MEMORY = "basic"
    settings.KARANI_MEMORY_TOP_K = 5
    ids = {
        "oncall": memory.remember(
            text="Northwind SREs carry a weekly on-call pager", company="Northwind"
        ).id,
        "remote": memory.remember(text="Prefers remote SRE roles", kind="preference").id,
        "acme": memory.remember(text="Acme SRE team is on-site only", company="Acme").id,
    }
    for n in range(14):
        memory.remember(text=f"Northwind SRE platform note number {n}", company="Northwind")
    return ids


@pytest.fixture
def reader(db):
    return client_with(token_for("context-reader"))


def _held_out_id(prefix: str) -> str:
    return next(
        f"{prefix}-{n}" for n in range(1000) if holdout.arm_for(f"{prefix}-{n}") == "holdout"
    )


def _memory_id(prefix: str) -> str:
    return next(
        f"{prefix}-{n}" for n in range(1000) if holdout.arm_for(f"{prefix}-{n}") == "memory"
    )


def test_it_gives_a_reader_the_block_with_company_and_global_facts(ledger, reader):
    response = reader.get(
        "/api/context", {"company": "Northwind", "title": "Senior SRE", "role_category": "sre"}
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["prompt_version"] == prompts.MEMORY_AWARE
    assert body["arm"] == Arm.NONE and body["mode"] == "basic" and body["fallback"] is False
    ids = [f["id"] for f in body["facts"]]
    assert len(ids) == 5  # KARANI_MEMORY_TOP_K
    assert ledger["acme"] not in ids  # another company's fact never leaks in
    assert set(body["facts"][0]) == {"id", "text", "kind", "company", "score", "why"}
    assert all(f["company"] in (None, "Northwind") and f["why"] for f in body["facts"])
    assert prompts.MEMORY_INSTRUCTION in body["block"]
    assert all(f"[fact {i}]" in body["block"] for i in ids)


def test_it_caps_the_limit_at_ten_and_refuses_a_limit_below_one(ledger, reader):
    query = {"company": "Northwind", "title": "SRE"}

    capped = reader.get("/api/context", {**query, "limit": 50})
    three = reader.get("/api/context", {**query, "limit": 3})
    zero = reader.get("/api/context", {**query, "limit": 0})

    assert capped.status_code == 200 and len(capped.json()["facts"]) == 10
    assert len(three.json()["facts"]) == 3
    assert zero.status_code == 400 and error_of(zero)["fields"].keys() == {"limit"}


def test_it_builds_the_same_block_as_qualifys_own_prompt(ledger, reader):
    from qualify import context
    from qualify.context import Subject

    body = reader.get("/api/context", {"company": "Northwind", "title": "Senior SRE"}).json()
    own = context.select(Subject(company="Northwind", title="Senior SRE"))

    assert [f["id"] for f in body["facts"]] == [f.id for f in own.facts]
    assert body["block"] == prompts.render_context(prompts.VERSIONS[prompts.MEMORY_AWARE], own)


def test_a_held_out_posting_gets_no_facts_and_the_pre_memory_prompt(ledger, reader, settings):
    settings.KARANI_MEMORY_HOLDOUT = 0.5
    held, kept = (
        _held_out_id("https://jobs.example.com/h"),
        _memory_id("https://jobs.example.com/m"),
    )
    query = {"company": "Northwind", "title": "Senior SRE"}

    out = reader.get("/api/context", {**query, "external_id": held}).json()
    memory_arm = reader.get("/api/context", {**query, "external_id": kept}).json()
    again = reader.post("/api/context", {**query, "external_id": held}, format="json").json()

    assert out == {
        **out,
        "arm": "holdout",
        "facts": [],
        "standing": [],
        "standing_omitted": 0,
        "block": "",
    }
    assert out["prompt_version"] == prompts.PRE_MEMORY
    assert memory_arm["arm"] == "memory" and memory_arm["facts"]
    assert memory_arm["prompt_version"] == prompts.MEMORY_AWARE
    assert again["arm"] == "holdout"  # the same stable assignment, by GET or POST


def test_a_recorded_posting_keeps_the_arm_its_key_draws(ledger, reader, settings):
    settings.KARANI_MEMORY_HOLDOUT = 0.5
    held = _held_out_id("ats")
    Posting.objects.create(
        company=memory_company("Northwind"), title="SRE", external_id=held, url=""
    )

    body = reader.get(
        "/api/context", {"company": "Northwind", "title": "SRE", "external_id": held}
    ).json()

    assert body["arm"] == "holdout" == holdout.arm_for(holdout.key_of(Posting.objects.get()))


def memory_company(name: str):
    from qualify.services import company_named

    return company_named(name)


def test_post_takes_the_whole_posting_and_writes_nothing(ledger, reader):
    before = counts()
    body = {
        "company": "Northwind",
        "title": "Senior SRE",
        "location": "Berlin",
        "remote": "hybrid",
        "salary": "90k EUR",
        "description": "Run our platform.\nWeekly on-call rotation.",
        "task": "decide whether to apply",
    }

    response = reader.post("/api/context", body, format="json")

    assert response.status_code == 200, response.content
    facts = response.json()["facts"]
    assert facts and all(f["company"] in (None, "Northwind") for f in facts)
    assert counts() == before and not Posting.all_objects.exists()


def test_post_reads_a_description_in_html_as_its_text(ledger, reader):
    # Read as words, the markup would bring facts that share a tag's or an entity's name.
    amp = memory.remember(text="Northwind's AMP pages were div soup", company="Northwind").id
    body = {
        "company": "Northwind",
        "title": "Senior SRE",
        "description": '<div class="content"><h2>The role</h2><ul><li>Run our platform.</li>'
        "<li>Join the weekly on-call pager &amp; its reviews</li></ul></div>",
    }

    response = reader.post("/api/context", body, format="json")

    assert response.status_code == 200, response.content
    why = {f["id"]: f["why"] for f in response.json()["facts"]}
    assert why[ledger["oncall"]] == "company fact; matches 'weekly', 'call', 'pager'"
    assert "'amp'" not in why.get(amp, ""), why


@pytest.mark.parametrize("method", ["get", "post"])
def test_it_shows_the_standing_preferences_beside_the_ranked_block(ledger, reader, method):
    query = {"company": "Northwind", "title": "Senior SRE", "limit": 50}

    body = getattr(reader, method)("/api/context", query, format="json").json()

    assert [f["id"] for f in body["standing"]] == [ledger["remote"]]
    assert body["standing_omitted"] == 0 and len(body["facts"]) == 10
    assert ledger["remote"] not in {f["id"] for f in body["facts"]}
    for fact in body["standing"] + body["facts"]:
        assert set(fact) == {"id", "text", "kind", "company", "score", "why"}
        assert fact["why"] and fact["text"] in body["block"]


def test_post_reads_the_remote_policy_as_written(ledger, reader):
    limit = memory.remember(text="Two office days a week is my limit", kind="preference")
    body = {"company": "Northwind", "title": "Senior SRE", "remote": "Hybrid (2 days)"}

    response = reader.post("/api/context", body, format="json")

    assert response.status_code == 200, response.content
    why = {f["id"]: f["why"] for f in response.json()["standing"]}
    assert why[limit.id] == (
        "your standing preference; bears on the location 'Hybrid (2 days)' ('days')"
    )


@pytest.mark.parametrize(
    ("params", "field", "code"),
    [
        ({"company": "Northwind", "title": f"SRE {GITHUB}"}, "title", "secret_refused"),
        (
            {"company": "Northwind", "title": "SRE", "external_id": GITHUB},
            "external_id",
            "secret_refused",
        ),
        (
            {"company": "Northwind", "title": "SRE", "external_id": "x" * 501},
            "external_id",
            "invalid",
        ),
        ({"company": "Northwind", "title": "SRE\x1b[31m"}, "title", "invalid"),
        ({"company": "Northwind", "title": "SRE", "remote": "moon"}, "remote", "invalid"),
        ({"company": "Northwind", "title": "   "}, "title", "invalid"),
        ({"company": "C" * 201, "title": "SRE"}, "company", "invalid"),
        ({"company": "Northwind", "title": "SRE", "limit": "ten"}, "limit", "invalid"),
    ],
    ids=["credential", "credential-id", "long-id", "escape", "remote", "blank", "long", "limit"],
)
def test_it_refuses_bad_input_in_one_line(ledger, reader, params, field, code):
    method = reader.post if "remote" in params else reader.get
    response = method("/api/context", params, **({"format": "json"} if "remote" in params else {}))

    assert response.status_code == 400, response.content
    error = error_of(response)
    assert (error["code"], list(error["fields"]) or [field]) == (code, [field])
    assert "\n" not in error["message"] and GITHUB not in error["message"]


def test_it_refuses_anonymous_callers(ledger):
    assert client_with(None).get("/api/context", {"company": "Northwind"}).status_code == 401


def test_context_is_throttled_like_recall_and_the_funnel_is_not(ledger, reader, settings):
    from django.core.cache import cache

    settings.KARANI_API_RECALL_RATE, settings.KARANI_API_WRITE_RATE = "2/min", "1/min"
    cache.clear()
    query = {"company": "Northwind", "title": "SRE"}

    answers = [reader.get("/api/context", query).status_code for _ in range(2)]
    answers.append(reader.post("/api/context", query, format="json").status_code)
    funnel = [reader.get("/api/funnel").status_code for _ in range(3)]

    assert answers == [200, 200, 429] and funnel == [200] * 3
