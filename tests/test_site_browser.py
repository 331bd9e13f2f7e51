"""Issue 15: karani served as the README says (runserver without --insecure, gunicorn), seen in
a real headless Chromium: static files, the home page, the admin's look and width.

Each server is a real child process on its own migrated SQLite ledger, DEBUG off.
"""

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from admin_helpers import sign_in
from django.db import connection
from ledger_helpers import child_env, karani

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="child servers run on SQLite"),
]

GUNICORN = Path(sys.executable).parent / "gunicorn"
PASSWORD = "curator-pass-2026"
RIGHT_EDGE = "return arguments[0].getBoundingClientRect().right"
STATIC_FILES = (
    "/static/admin/css/base.css",
    "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.fixture(scope="module")
def site_env(tmp_path_factory) -> dict[str, str]:
    """A migrated ledger with a superuser and a few facts, one long enough to wrap."""
    data = tmp_path_factory.mktemp("site") / "data"
    env = child_env(
        DATABASE_URL=None,
        KARANI_DATA_DIR=str(data),
        KARANI_MEMORY=None,
        KARANI_DEBUG=None,
        DJANGO_SUPERUSER_USERNAME="curator",
        DJANGO_SUPERUSER_PASSWORD=PASSWORD,
        DJANGO_SUPERUSER_EMAIL="c@example.org",
    )
    cwd = data.parent
    for args in (["migrate", "-v0"], ["createsuperuser", "--noinput"]):
        proc = karani(*args, cwd=cwd, env=env)
        assert proc.returncode == 0, proc.stderr
    long_fact = "Prefers teams that write things down: " + "design docs, decision records, " * 8
    for args in (
        ["remember", long_fact.strip(), "--company", "Northwind Robotics International Holdings"],
        ["remember", "Avoids agencies", "--kind", "preference"],
    ):
        assert karani(*args, cwd=cwd, env=env).returncode == 0
    return env


def _serve(command: list[str], env: dict[str, str], log: Path) -> Iterator[str]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*command, f"127.0.0.1:{port}"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _get(f"{url}/admin/login/")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"server did not start: {log.read_text()}")
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def runserver(site_env, tmp_path_factory) -> Iterator[str]:
    """`karani runserver` exactly as the README says: no --insecure, DEBUG off."""
    log = tmp_path_factory.mktemp("runserver") / "server.log"
    karani_bin = Path(sys.executable).parent / "karani"
    yield from _serve([str(karani_bin), "runserver", "--noreload"], site_env, log)


@pytest.fixture(scope="module")
def gunicorn(site_env, tmp_path_factory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("gunicorn") / "server.log"
    yield from _serve(
        [str(GUNICORN), "karani_site.wsgi", "--workers", "1", "--bind"], site_env, log
    )


@pytest.mark.parametrize("server", ["runserver", "gunicorn"])
def test_static_files_are_served_without_debug_or_insecure(server, request):
    url = request.getfixturevalue(server)
    for path in STATIC_FILES:
        status, body = _get(url + path)
        assert status == 200, path
        assert len(body) > 1000, path


def test_the_home_page_says_what_karani_is_and_links_everything(browser, runserver, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(f"{runserver}/")
    assert browser.title.startswith("karani")
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "long-term memory" in body
    links = {a.text: a.get_attribute("href") for a in browser.find_elements(By.TAG_NAME, "a")}
    assert links["Admin"] == f"{runserver}/admin/"
    assert links["API docs"] == f"{runserver}/api/docs/"
    layers = {
        row.find_elements(By.TAG_NAME, "td")[0].text: row.find_elements(By.TAG_NAME, "td")[1].text
        for row in browser.find_elements(By.CSS_SELECTOR, "tr.layer")
    }
    assert layers["ledger"] == "ok"
    # Anonymous visitors see ok/FAIL, not database names.
    assert "karani.sqlite3" not in body
    assert browser.save_screenshot(str(tmp_path / "home.png"))

    sign_in(browser, runserver, "curator", PASSWORD)
    browser.get(f"{runserver}/")
    assert "2 live facts" in browser.find_element(By.TAG_NAME, "body").text


def test_the_admin_is_styled_titled_karani_and_fits_1400_pixels(browser, runserver, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    sign_in(browser, runserver, "curator", PASSWORD)
    WebDriverWait(browser, 20).until(ec.url_to_be(f"{runserver}/admin/"))
    assert "karani" in browser.title and "Django" not in browser.title
    header = browser.find_element(By.ID, "site-name").text
    assert header == "karani administration"
    # base.css loaded: the header has the admin's colour, not the browser's default.
    colour = browser.execute_script(
        "return getComputedStyle(document.getElementById('header')).backgroundColor"
    )
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")

    browser.get(f"{runserver}/admin/memory/memory/")
    width = browser.execute_script("return window.innerWidth")
    assert width <= 1400
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    # The list scrolls inside its own box when too wide: each column must end inside that box.
    box = browser.execute_script(RIGHT_EDGE, browser.find_element(By.CSS_SELECTOR, ".results"))
    assert box <= width
    for column in ("status_badge", "last_seen", "created"):
        for cell in browser.find_elements(By.CSS_SELECTOR, f"#result_list td.field-{column}"):
            right = browser.execute_script(RIGHT_EDGE, cell)
            assert right <= box, column
    dates = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "td.field-created")]
    seen = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "td.field-last_seen")]
    assert dates and all(len(d) == len("2026-12-03 12:00") for d in dates)
    assert all(s.startswith(d[:10]) for s, d in zip(seen, dates, strict=True))
    shot = tmp_path / "admin-list-1400.png"
    assert browser.save_screenshot(str(shot))
    print(f"screenshot: {shot}")


def test_the_api_docs_render(browser, runserver, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{runserver}/api/docs/")
    title = WebDriverWait(browser, 30).until(
        ec.visibility_of_element_located((By.CSS_SELECTOR, ".swagger-ui .info .title"))
    )
    assert "karani memory API" in title.text
    shot = tmp_path / "api-docs.png"
    assert browser.save_screenshot(str(shot))
    print(f"screenshot: {shot}")
