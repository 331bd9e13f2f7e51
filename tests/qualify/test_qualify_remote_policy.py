"""A posting's remote policy as boards write it: the policy is recorded, its detail is kept in
the location, and a value naming no policy is refused in one line through every door."""

import pytest

from qualify import remote_policy
from qualify.remote_policy import UnknownPolicy


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("Hybrid (2 days)", ("hybrid", "2 days")),
        ("hybrid", ("hybrid", "")),
        ("HYBRID - 3 days in office", ("hybrid", "3 days in office")),
        ("On-site", ("onsite", "")),
        ("on site, 5 days a week", ("onsite", "5 days a week")),
        ("In office (Chicago)", ("onsite", "Chicago")),
        ("onsite", ("onsite", "")),
        ("Remote (US)", ("remote", "US")),
        ("Remote - Europe", ("remote", "Europe")),
        ("Remote-first", ("remote", "")),
        ("Fully remote: EU time zones", ("remote", "EU time zones")),
        ("  remote  ", ("remote", "")),
        ("Unknown", ("unknown", "")),
        ("", ("", "")),
    ],
)
def test_it_reads_the_policy_and_its_detail(written, read):
    assert remote_policy.read(written) == read


@pytest.mark.parametrize("written", ["sometimes", "remotely", "flexible (hybrid)", "Office"])
def test_a_value_naming_no_policy_is_refused_in_one_line(written):
    with pytest.raises(UnknownPolicy) as refused:
        remote_policy.read(written)
    assert str(refused.value).startswith(f"remote {written!r} names no policy")
    assert "\n" not in str(refused.value)


def test_the_detail_is_kept_beside_the_location():
    assert remote_policy.located("New York, NY", "2 days") == "New York, NY (2 days)"
    assert remote_policy.located("", "US") == "US"
    assert remote_policy.located("Berlin", "") == "Berlin"
