"""Issue 4, admin in a real browser: log in, find a fact, correct it, see the chain.

Headless Chromium from Debian's `chromium` + `chromium-driver` (scripts/ensure-chromium),
driven by Selenium against pytest-django's live server. Without Chromium the test skips on
a laptop and fails in CI, where scripts/test installs it first.
"""

import pytest
from admin_helpers import sign_in
from django.contrib.auth import get_user_model

from memory import services
from memory.models import Memory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "curator-pass-2026"
WAIT_SECONDS = 20


@pytest.fixture
def curator() -> str:
    user = get_user_model().objects.create_superuser("curator", "c@example.org", PASSWORD)
    return user.username


def test_it_logs_in_finds_a_fact_corrects_it_and_sees_the_chain(
    browser, live_server, curator, tmp_path
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT_SECONDS)
    old = services.remember(
        text="Candidate prefers on-site work in Lisbon", company="Northwind", ref="call 12"
    ).memory
    services.remember(text="Avoids agencies")

    sign_in(browser, live_server.url, curator, PASSWORD, then="/admin/memory/memory/")
    wait.until(ec.presence_of_element_located((By.ID, "searchbar")))

    browser.find_element(By.ID, "searchbar").send_keys("lisbon\n")
    wait.until(ec.url_contains("q=lisbon"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")
    assert len(rows) == 1
    assert browser.save_screenshot(str(tmp_path / "admin-search.png"))
    rows[0].find_element(By.LINK_TEXT, "Candidate prefers on-site work in Lisbon").click()

    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "a.memory-correct"))).click()
    text_box = wait.until(ec.presence_of_element_located((By.NAME, "text")))
    text_box.clear()
    text_box.send_keys("Candidate prefers remote work from Lisbon")
    browser.find_element(By.NAME, "reason").send_keys("moved to remote-only in November")
    browser.find_element(By.CSS_SELECTOR, "#memory-curation-form input[type=submit]").click()

    wait.until(ec.presence_of_element_located((By.ID, "memory-chain")))
    new = Memory.objects.get(supersedes=old)
    chain = browser.find_element(By.ID, "memory-chain")
    browser.execute_script("arguments[0].scrollIntoView()", chain)
    shot = tmp_path / "admin-correction-chain.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")

    assert browser.current_url.endswith(f"/admin/memory/memory/{new.pk}/change/")
    assert f"#{old.pk} corrected: #{new.pk} supersedes it" in browser.page_source
    old_row = chain.find_element(By.ID, f"chain-{old.pk}")
    new_row = chain.find_element(By.ID, f"chain-{new.pk}")
    assert "superseded" in old_row.find_element(By.CLASS_NAME, "memory-chain-status").text
    assert "moved to remote-only in November" in old_row.text
    assert f"by {curator}" in old_row.text
    assert "Candidate prefers on-site work in Lisbon" in old_row.text
    assert "ref: call 12" in old_row.text
    assert "live" in new_row.find_element(By.CLASS_NAME, "memory-chain-status").text
    assert f"supersedes #{old.pk}" in new_row.text
    assert f"by {curator}" in new_row.text

    # The old fact's own page tells the same story from the other end.
    old_row.find_element(By.LINK_TEXT, f"#{old.pk}").click()
    wait.until(ec.url_contains(f"/admin/memory/memory/{old.pk}/change/"))
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "superseded" in page
    assert not browser.find_elements(By.CSS_SELECTOR, "a.memory-correct")
