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
