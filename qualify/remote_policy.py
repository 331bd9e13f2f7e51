"""A posting's remote policy as job boards and pipelines write it ("Hybrid (2 days)", "On-site",
"Remote - US"): the policy karani records (qualify.models.Remote) and the detail after it,
which a posting keeps in its location."""

import re

from qualify.models import Remote

# How each policy is written at the start of the value; the longest way is tried first.
WAYS = {
    Remote.REMOTE: ("remote", "fully remote", "remote-first", "remote first", "work from home"),
    Remote.HYBRID: ("hybrid",),
    Remote.ONSITE: ("onsite", "on-site", "on site", "in office", "in-office", "in person"),
    Remote.UNKNOWN: ("unknown",),
}
_POLICY = {way: policy.value for policy, ways in WAYS.items() for way in ways}
_LEAD = re.compile(
    r"(?P<way>" + "|".join(map(re.escape, sorted(_POLICY, key=len, reverse=True))) + r")\b",
    re.IGNORECASE,
)
# What separates the policy from its detail, or wraps the detail: "Hybrid (2 days)".
_EDGES = " \t-\u2013\u2014:;,/()[]"


class UnknownPolicy(ValueError):
    """The value does not start with a remote policy; the message is one line for the caller."""


def read(value: str) -> tuple[str, str]:
    """(the policy, the detail after it): "Hybrid (2 days)" is ("hybrid", "2 days"), "" is
    ("", ""). Raises UnknownPolicy when the value does not start with a policy."""
    text = " ".join(value.split())
    if not text:
        return "", ""
    lead = _LEAD.match(text)
    if lead is None:
        raise UnknownPolicy(
            f"remote {text!r} names no policy: start it with remote, hybrid or onsite,"
            " e.g. 'Hybrid (2 days)'"
        )
    return _POLICY[lead["way"].lower()], text[lead.end() :].strip(_EDGES)


def located(location: str, detail: str) -> str:
    """The location with the policy's detail kept beside it: "New York, NY (2 days)"."""
    if not detail:
        return location
    return f"{location} ({detail})" if location else detail
