"""Two `qualify` batches racing over the same postings (real OS processes, Postgres): the
database's one-live-verdict constraint decides, so every posting ends with exactly one live
verdict and one verdict fact; the loser skips the posting instead of failing."""

import json

import pytest
from ledger_helpers import KARANI, child_env, children_database_url, spawn
from qualify_fakes import Slow, make_posting

from memory import services as memory
from qualify.models import Qualification

N_POSTINGS = 12
N_PROCESSES = 3


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_leaves_one_live_verdict_per_posting_when_batches_race(fake_llm, profile):
    postings = [make_posting(title=f"SRE {i}") for i in range(N_POSTINGS)]
    # Slow answers keep every batch busy long enough for the others to start on the same list.
    fake_llm.default = Slow(0.2)
    env = child_env(
        DATABASE_URL=children_database_url(),
        KARANI_MEMORY="basic",
        KARANI_LLM_BASE_URL=fake_llm.url,
        KARANI_LLM_TIMEOUT="30",
    )

    procs = [spawn([str(KARANI), "qualify", "--json"], env) for _ in range(N_PROCESSES)]
    summaries = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        summaries.append(json.loads(out.strip().splitlines()[-1]))

    assert sum(s["qualified"] for s in summaries) == N_POSTINGS
    assert all(s["qualified"] + s["skipped"] == s["total"] for s in summaries)
    assert all(s["errors"] == 0 for s in summaries)
    live = Qualification.objects.decided()
    assert sorted(live.values_list("posting_id", flat=True)) == sorted(p.pk for p in postings)
    refs = [m.ref for m in memory.iter_all_facts() if m.source == "verdict"]
    assert sorted(refs) == sorted(f"qualification:{q.pk}" for q in live)
