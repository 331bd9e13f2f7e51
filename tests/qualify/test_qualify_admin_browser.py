"""The qualify admin in a real browser: from the admin index to the funnel chart, and a
verdict's page that offers nothing to save or delete.

Headless Chromium + chromedriver (scripts/ensure-chromium, run by scripts/test). Without
them the test skips on a laptop and fails in CI.
"""

import pytest
from admin_helpers import sign_in
from api_helpers import decision_body
from django.contrib.auth import get_user_model
from qualify_fakes import make_posting

from qualify import services
from qualify.models import Qualification

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "funnel-viewer-2026"


@pytest.fixture
def viewer() -> str:
    return get_user_model().objects.create_superuser("viewer", "v@example.org", PASSWORD).username


def test_it_reaches_the_funnel_chart_from_the_admin_index(browser, live_server, viewer, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    posting = make_posting()
    q = Qualification.objects.create(
        posting=posting, verdict="qualified", fit_score=81, prompt_version="qualify-v2-memory"
    )
    services.record_outcome(posting_id=posting.pk, stage="applied")
    wait = WebDriverWait(browser, 20)

    sign_in(browser, live_server.url, viewer, PASSWORD)
    wait.until(ec.presence_of_element_located((By.LINK_TEXT, "Funnel chart"))).click()

    chart = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#funnel-chart svg")))
    assert chart.size["width"] > 300 and chart.size["height"] > 150
    table = browser.find_element(By.ID, "funnel-table").text
    assert "qualify-v2-memory" in table and "1 (100%)" in table
    shot = tmp_path / "funnel.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000

    browser.get(f"{live_server.url}/admin/qualify/qualification/{q.pk}/change/")
    wait.until(ec.presence_of_element_located((By.ID, "content")))
    assert not browser.find_elements(By.NAME, "_save")
    assert not browser.find_elements(By.CSS_SELECTOR, "a.deletelink")


def test_a_decision_recorded_through_the_api_reads_as_words_and_links(
    browser, live_server, viewer, tmp_path
):
    """The arm in words, no latency where none was measured, each fact a link to its page, and
    the memory block aligned with the other fields (looked at in a screenshot)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from memory import services as memory
    from qualify.decisions import record_decision

    fact = memory.remember(text="Northwind's on-call is weekly", company="Northwind").memory
    # What POST /api/decisions hands the writer: Northwind's Senior SRE, rejected at 35.
    decided = record_decision(
        **decision_body(facts=[{"id": fact.pk, "why": "the company's on-call"}])
    )
    wait = WebDriverWait(browser, 20)
    sign_in(browser, live_server.url, viewer, PASSWORD)
    browser.get(f"{live_server.url}/admin/qualify/qualification/{decided.qualification.pk}/change/")
    wait.until(ec.presence_of_element_located((By.ID, "content")))
    block = browser.find_element(By.CSS_SELECTOR, ".field-memory_block .readonly")
    browser.execute_script("arguments[0].scrollIntoView()", block)
    shot = tmp_path / "decision.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")

    arm = browser.find_element(By.CSS_SELECTOR, ".field-arm_words .readonly").text
    assert arm.startswith("not randomised"), arm
    assert not browser.find_elements(By.CSS_SELECTOR, ".field-latency_ms, .field-latency")
    links = browser.find_elements(By.CSS_SELECTOR, ".field-fact_links a, .field-memory_block a")
    hrefs = {link.get_attribute("href") for link in links}
    assert hrefs == {f"{live_server.url}/admin/memory/memory/{fact.pk}/change/"}, hrefs
    # The block's list starts where the other fields' values start, not indented past them.
    value = browser.find_element(By.CSS_SELECTOR, ".field-arm_words .readonly")
    first_item = block.find_element(By.TAG_NAME, "div")
    assert abs(first_item.location["x"] - value.location["x"]) <= 2, (
        first_item.location,
        value.location,
    )


def test_a_decisions_standing_part_leads_to_the_standing_page(
    browser, live_server, viewer, settings
):
    """Both parts on a decision's page, and from it the standing part as the model sees it,
    with the budget used and what it leaves out."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from memory import services as memory
    from qualify.models import DecisionFact, FactPart

    settings.KARANI_STANDING_BUDGET = 520
    pref = memory.remember(text="A heavy SRE pager is my dealbreaker", kind="preference").id
    for i in range(12):
        memory.remember(text=f"I like quiet desks, number {i}", kind="preference")
    q = Qualification.objects.create(
        posting=make_posting(),
        verdict="rejected",
        fit_score=20,
        prompt_version="qualify-v5-standing",
    )
    DecisionFact.objects.create(
        qualification=q, memory_id=pref, why="your standing preference", part=FactPart.STANDING
    )
    wait = WebDriverWait(browser, 20)

    sign_in(
        browser,
        live_server.url,
        viewer,
        PASSWORD,
        then=f"/admin/qualify/qualification/{q.pk}/change/",
    )
    wait.until(ec.presence_of_element_located((By.LINK_TEXT, "the standing part now"))).click()

    part = wait.until(ec.presence_of_element_located((By.ID, "standing-part"))).text
    assert "These are the candidate's standing preferences" in part
    assert "more left out, bearing least on this posting" in part
    budget = browser.find_element(By.ID, "standing-budget").text
    assert " of 520 characters used" in budget
    assert browser.find_element(By.ID, "standing-left-out").text
