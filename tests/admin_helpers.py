"""Shared helpers for the admin specs (issue 4). Not a test module."""

from django.urls import reverse

from memory import services
from memory.models import Memory

CHANGELIST = reverse("admin:memory_memory_changelist")
ADD = reverse("admin:memory_memory_add")


def change_url(pk: int) -> str:
    return reverse("admin:memory_memory_change", args=[pk])


def correct_url(pk: int) -> str:
    return reverse("admin:memory_memory_correct", args=[pk])


def forget_url(pk: int) -> str:
    return reverse("admin:memory_memory_forget", args=[pk])


def fact(text: str, **kwargs: object) -> Memory:
    """A live fact written through the service, as every real caller does."""
    return services.remember(text=text, **kwargs).memory


def reload(memory: Memory) -> Memory:
    return Memory.all_objects.get(pk=memory.pk)


def sign_in(browser: "WebDriver", url: str, user: str, password: str, then: str = "") -> None:  # noqa: F821
    """Log in through the admin's own form at ``url``, then wait until it has redirected."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{url}/admin/login/" + (f"?next={then}" if then else ""))
    browser.find_element(By.NAME, "username").send_keys(user)
    browser.find_element(By.NAME, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # A navigation issued before the login's redirect lands would race it.
    WebDriverWait(browser, 20).until(lambda b: "/admin/login/" not in b.current_url)
