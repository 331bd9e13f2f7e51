"""The intervals match published reference values: Wilson's score interval and Newcombe's
hybrid score interval for a difference (Newcombe 1998, Statistics in Medicine 17, Table I of
part 1 and Table II of part 2, 4 decimals)."""

import pytest

from qualify import stats


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (29, 29, 0.8830, 1.0),
    ],
)
def test_it_matches_wilson_reference_values(successes, n, low, high):
    interval = stats.wilson(successes, n)

    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)
    assert interval.estimate == successes / n


@pytest.mark.parametrize(
    ("s1", "n1", "s2", "n2", "low", "high"),
    [
        (56, 70, 48, 80, 0.0524, 0.3339),
        (9, 10, 3, 10, 0.1705, 0.8090),
        (6, 7, 2, 7, 0.0582, 0.8062),
        (5, 56, 0, 29, -0.0381, 0.1926),
        (0, 10, 0, 20, -0.1611, 0.2775),
    ],
)
def test_it_matches_newcombe_reference_values(s1, n1, s2, n2, low, high):
    interval = stats.newcombe(s1, n1, s2, n2)

    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)


def test_it_gives_no_interval_for_an_empty_sample():
    assert stats.wilson(0, 0) is None
    assert stats.newcombe(3, 10, 0, 0) is None


def test_it_refuses_more_successes_than_trials():
    with pytest.raises(ValueError, match=r"outside 0\.\.5"):
        stats.wilson(6, 5)
