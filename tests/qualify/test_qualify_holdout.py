"""The randomised holdout: a posting's arm is fixed by a salted hash, the configured share
lands in the holdout arm, holdout postings get the pre-memory prompt, and the arm is
recorded on the qualification."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from qualify_fakes import make_posting, memory_sensitive, run_qualify

from memory import services as memory
from qualify import holdout, prompts
from qualify.models import Arm, InstallationSalt, Qualification

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("fresh_salt")


@pytest.mark.parametrize("share", [0.05, 0.1, 0.25, 0.5])
def test_it_puts_the_configured_share_of_10000_ids_in_the_holdout(share):
    positions = [holdout.position(i, salt_value="installation-a") for i in range(1, 10_001)]

    held = sum(p < share for p in positions)

    # Binomial(10000, share): 4 standard deviations either side.
    sd = (10_000 * share * (1 - share)) ** 0.5
    assert abs(held - 10_000 * share) < 4 * sd


def test_it_gives_a_posting_the_same_arm_every_time_and_another_installation_other_arms():
    first = [holdout.position(i, salt_value="installation-a") for i in range(1, 10_001)]
    again = [holdout.position(i, salt_value="installation-a") for i in range(1, 10_001)]
    other = [holdout.position(i, salt_value="installation-b") for i in range(1, 10_001)]

    assert first == again
    assert sum((a < 0.1) != (b < 0.1) for a, b in zip(first, other, strict=True)) > 1000


@pytest.mark.django_db
def test_it_stores_one_salt_per_installation(settings):
    settings.KARANI_MEMORY_HOLDOUT = 0.2

    arms = [holdout.arm_for(i) for i in range(1, 501)]
    holdout._salt_cache.clear()  # read back from the database, not the process cache
    again = [holdout.arm_for(i) for i in range(1, 501)]

    (row,) = InstallationSalt.objects.all()
    assert len(row.value) == 32 and arms == again
    expected = [
        Arm.HOLDOUT if holdout.position(i, salt_value=row.value) < 0.2 else Arm.MEMORY
        for i in range(1, 501)
    ]
    assert arms == expected


@pytest.mark.django_db
def test_it_randomises_nothing_when_the_share_is_0_or_memory_is_off(settings):
    settings.KARANI_MEMORY_HOLDOUT = 0.0
    assert {holdout.arm_for(i) for i in range(1, 200)} == {Arm.NONE}

    settings.KARANI_MEMORY_HOLDOUT = 0.5
    settings.KARANI_MEMORY = "off"
    assert {holdout.arm_for(i) for i in range(1, 200)} == {Arm.NONE}
    assert not InstallationSalt.objects.exists()  # the salt is not even needed


@pytest.mark.django_db
def test_it_asks_holdout_postings_without_memory_and_records_the_arm(
    llm_settings, fake_llm, profile
):
    llm_settings.KARANI_MEMORY_HOLDOUT = 0.5
    fake_llm.responder = memory_sensitive
    memory.remember(
        text="Northwind Robotics SRE team: heavy pager load every week",
        kind="note",
        company="Northwind Robotics",
    )
    postings = [make_posting(title=f"Senior SRE {i}") for i in range(40)]

    run_qualify()

    by_posting = {q.posting_id: q for q in Qualification.objects.all()}
    arms = {p.pk: holdout.arm_for(p.pk) for p in postings}
    assert set(arms.values()) == {Arm.MEMORY, Arm.HOLDOUT}  # 40 postings at 0.5: both arms
    for posting in postings:
        q = by_posting[posting.pk]
        assert q.arm == arms[posting.pk]
        if q.arm == Arm.HOLDOUT:
            # Pre-memory: no block, no few-shot; the scripted model cannot see the warning.
            assert (q.prompt_version, q.fact_count, q.verdict) == (
                prompts.PRE_MEMORY,
                0,
                "qualified",
            )
        else:
            assert (q.prompt_version, q.verdict) == (prompts.MEMORY_AWARE, "rejected")
            assert q.fact_count >= 1
    held_prompts = [r for r in fake_llm.requests if prompts.MEMORY_HEADER not in str(r["messages"])]
    assert all(prompts.FEW_SHOT_HEADER not in str(r["messages"]) for r in held_prompts)


@pytest.mark.django_db
def test_it_offers_holdout_postings_no_recall_tool_in_agent_mode(llm_settings, fake_llm, profile):
    llm_settings.KARANI_MEMORY_HOLDOUT = 0.5
    postings = [make_posting(title=f"Platform engineer {i}") for i in range(12)]

    run_qualify(agent=True)

    for q in Qualification.objects.all():
        expected = prompts.PRE_MEMORY if q.arm == Arm.HOLDOUT else prompts.MEMORY_AGENT
        assert q.prompt_version == expected
    held = sum(holdout.arm_for(p.pk) == Arm.HOLDOUT for p in postings)
    assert sum("tools" in r for r in fake_llm.requests) == len(postings) - held


@pytest.mark.parametrize("value", ["0.6", "-0.1", "ten percent", "nan"])
def test_it_refuses_a_bad_holdout_share_naming_the_range(value):
    env = {**os.environ, "KARANI_MEMORY_HOLDOUT": value}
    env.pop("DATABASE_URL", None)

    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1
    assert (
        f"KARANI_MEMORY_HOLDOUT={value!r} is not valid; use a fraction from 0 to 0.5"
        in result.stderr
    )
