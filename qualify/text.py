"""memory's text policy (memory.text) on qualify's own model fields, for the ways in that do
not pass through qualify.inputs: the admin's forms and ``karani profile set``."""

from typing import Any

from django import forms

from memory.text import normalise, refusal

# The texts that keep their line breaks; every other field is one line of single spaces.
MULTILINE = frozenset({"description", "task", "summary", "preferences"})


def policed(name: str, value: Any) -> tuple[Any, str | None]:
    """``value`` (a text, or a list of texts) normalised, and the policy's refusal of its
    first refused character (None when it has none); anything else is returned as it is."""
    if isinstance(value, str):
        return normalise(value, multiline=name in MULTILINE), refusal(value, field=name)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        refused = next(filter(None, (refusal(item, field=name) for item in value)), None)
        items = [normalise(item, multiline=False) for item in value]
        return [item for item in items if item], refused
    return value, None


class PolicedModelForm(forms.ModelForm):
    """The admin's form for qualify's models: every text field under the policy, refused with
    its one message or normalised, before the model's own checks read it."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name, value in list(cleaned.items()):
            value, refused = policed(name, value)
            if refused:
                self.add_error(name, refused)
            else:
                cleaned[name] = value
        return cleaned
