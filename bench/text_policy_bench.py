"""The text policy's cost per field (memory.text: ``refusal`` then ``normalise``), beside the
check it replaced (``has_control_chars`` then a strip), measured in the same run.

    .venv/bin/python -m bench.text_policy_bench

Texts: a short ASCII fact, and job-board descriptions of 3,000 and 20,000 characters (the
posting limit) with CRLF, tabs, no-break spaces, soft hyphens and an emoji sequence. The old
check refused most of those descriptions; it is timed on them all the same (it scans until
the end when nothing is refused, so it is timed on a copy it accepts, without CR and the soft
hyphen). Prints the median and p95 per call in microseconds.
"""

import statistics
import time
import unicodedata

from memory import text

_JOINERS = "\u200c\u200d"


def old_has_control_chars(value: str) -> bool:
    """memory.text.has_control_chars before the policy (git show 646bcfd:memory/text.py)."""
    return not value.isprintable() and any(
        unicodedata.category(ch).startswith("C")
        and ch not in "\n\t"
        and not (ch in _JOINERS and text._is_joining(value, i))
        for i, ch in enumerate(value)
    )


def old(value: str) -> str:
    assert not old_has_control_chars(value)
    return value.strip()


def new(value: str) -> str:
    assert text.refusal(value, field="description") is None
    return text.normalise(value, multiline=True)


PARAGRAPH = (
    "\ufeffWe\u2019re hiring a Senior\u00a0SRE (on\u00adcall 1\u00a0week in 6).\r\n"
    "\tYou will own Kubernetes, Terraform and the paging rota \U0001f469\u200d\U0001f4bb.\r\n"
    "Salary: 90\u202f000\u00a0EUR, hybrid (2 days) in Z\u00fcrich.\r\n\r\n"
)


def description(chars: int) -> str:
    return (PARAGRAPH * (chars // len(PARAGRAPH) + 1))[:chars]


def accepted_by_old(value: str) -> str:
    return value.replace("\r", "").replace("\u00ad", "").replace("\ufeff", "")


def timed(fn, value: str, runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(value)
        samples.append((time.perf_counter() - start) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95)]


def main() -> None:
    cases = [
        (
            "short ASCII fact",
            "Prefers remote-first teams with a light on-call rotation.",
            5000,
        ),
        ("description, 3,000 chars", description(3000), 500),
        ("description, 20,000 chars", description(20000), 100),
    ]
    print("| text | policy p50 / p95 (µs) | old check p50 / p95 (µs) |")
    print("| --- | --- | --- |")
    for name, value, runs in cases:
        policy = timed(new, value, runs)
        baseline = timed(old, accepted_by_old(value), runs)
        mine, theirs = (
            f"{policy[0]:.1f} / {policy[1]:.1f}",
            f"{baseline[0]:.1f} / {baseline[1]:.1f}",
        )
        print(f"| {name} | {mine} | {theirs} |")


if __name__ == "__main__":
    main()
