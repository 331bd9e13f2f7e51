"""Wilson's interval for a rate and Newcombe's hybrid score interval (his method 10) for a
difference of two: unlike the normal approximation, both behave at 0 and n successes."""

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist

Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {name: round(value, 4) for name, value in asdict(self).items()}


def wilson(successes: int, n: int) -> Interval | None:
    """The rate successes/n with its Wilson score interval; None when n is 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside 0..{n}")
    p = successes / n
    denominator = 1 + Z95 * Z95 / n
    centre = (p + Z95 * Z95 / (2 * n)) / denominator
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 * Z95 / (4 * n * n)) / denominator
    # At 0 and n successes the bounds are exactly 0 and 1; rounding would leave 1e-17.
    low = 0.0 if successes == 0 else centre - half
    high = 1.0 if successes == n else centre + half
    return Interval(estimate=p, low=low, high=high)


def newcombe(s1: int, n1: int, s2: int, n2: int) -> Interval | None:
    """p1 - p2 with Newcombe's hybrid score interval; None when either n is 0."""
    first, second = wilson(s1, n1), wilson(s2, n2)
    if first is None or second is None:
        return None
    p1, p2 = first.estimate, second.estimate
    diff = p1 - p2
    low = diff - math.sqrt((p1 - first.low) ** 2 + (second.high - p2) ** 2)
    high = diff + math.sqrt((first.high - p1) ** 2 + (p2 - second.low) ** 2)
    return Interval(estimate=diff, low=max(-1.0, low), high=min(1.0, high))
