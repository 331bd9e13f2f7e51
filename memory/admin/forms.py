"""The curation forms only collect input: every rule is the service's."""

from typing import Any

from django import forms
from django.core.validators import ProhibitNullCharactersValidator

from memory import text as textmod
from memory.errors import MemoryInputError
from memory.models import Kind
from memory.validation import MAX_COMPANY_CHARS, MAX_REASON_CHARS, MAX_REF_CHARS


def _reason_field() -> forms.CharField:
    return forms.CharField(
        max_length=MAX_REASON_CHARS,
        help_text="Why: recorded on the fact with your username, shown in its history.",
        widget=forms.TextInput(attrs={"size": 80}),
    )


class ServiceForm(forms.Form):
    """Refused characters are the text policy's (the service's one message, naming the
    character and where it is), so Django's own NUL check is taken off every field."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.validators = [
                v for v in field.validators if not isinstance(v, ProhibitNullCharactersValidator)
            ]


class RememberForm(ServiceForm):
    text = forms.CharField(
        max_length=textmod.MAX_TEXT_CHARS,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="One distilled fact. Never a credential, never a whole job description.",
    )
    kind = forms.ChoiceField(choices=Kind.choices, initial=Kind.NOTE)
    company = forms.CharField(
        max_length=MAX_COMPANY_CHARS,
        required=False,
        empty_value=None,
        help_text="Leave empty for a global fact (applies to every company).",
    )
    ref = forms.CharField(
        max_length=MAX_REF_CHARS,
        required=False,
        empty_value=None,
        help_text="Where it comes from (a posting, a conversation), if anywhere.",
    )


class CorrectForm(ServiceForm):
    text = forms.CharField(
        label="New text",
        max_length=textmod.MAX_TEXT_CHARS,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="The corrected fact. Kind, company, fit score and ref carry over.",
    )
    reason = _reason_field()


class ForgetForm(ServiceForm):
    reason = _reason_field()


def add_service_error(form: forms.Form, exc: MemoryInputError) -> None:
    # A field the form does not show makes the refusal about the form as a whole.
    form.add_error(exc.field if exc.field in form.fields else None, str(exc))
