"""The screen skips html-text's parse of a description when html-text would read it as the
tag-as-space reading it already scans (memory.reading._read_as_spaced). Generated markup
around split tokens, punctuation and tags html-text treats apart holds that the skip never
drops a reading the screen would otherwise scan, nor a credential it would find."""

import random

import pytest

from memory import credentials, reading

TOKEN = "ghp_Vb4nQ8rT2xK6mZ1pL9wS3dF7hJ5gY0aC2eU4"
SPACED = ["<b>", "</b>", "<i>", "</i>", "<span>", "</span>", "<p>", "</p>", "<br>", "<br/>",
          "<li>", "</li>", "<div class=\"x\">", "</div>", "<a href='https://x.io/a'>", "</a>",
          "<strong>", "</strong>", "<h2>", "</h2>", "<pre>", "</pre>"]  # fmt: skip
OTHER = ["<table>", "<td>", "</td>", "<script>x</script>", "<style>b{}</style>", "<title>",
         "</title>", "<object>", "</object>", "<!-- c -->", "<head>", "<textarea>", "<iframe>",
         "<noscript>", "</noscript>", "<3", "&amp;", "%5F", "\\u005f",
         "<a title=\"x>y\">"]  # fmt: skip
WORDS = ["password", "is", "Portal", "Harbor58!qx", "token", "=", ":", ",", ".", "(", ")",
         "!", "?", '"', "'", "-", "_", "/", ";", "ghp", "Vb4nQ8rT", "x", " ", "  ", "\n",
         ">"]  # fmt: skip
PAIRED = ["b", "i", "em", "span", "code", "p", "div", "li", "h3", "ul", "a"]


def _texts(seed: int, count: int, other: float, lone: float = 0.2) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        pieces = []
        for _ in range(rng.randint(3, 14)):
            roll = rng.random()
            if roll < other:
                pieces.append(rng.choice(OTHER))
            elif roll < other + lone:
                pieces.append(rng.choice(SPACED))
            elif roll < other + lone + 0.2:  # a word in a balanced pair of tags
                name = rng.choice(PAIRED)
                pieces.append(f"<{name}>{rng.choice(WORDS)}</{name}>")
            else:
                pieces.append(rng.choice(WORDS))
        out.append("".join(pieces))
    return out


def _split_tokens(seed: int, count: int, glue: bool) -> list[str]:
    """TOKEN with tags (and with ``glue``, at times punctuation beside them) at random
    places in it."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        token = TOKEN
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(1, len(token) - 1)
            tag = rng.choice(SPACED) + rng.choice(["", "", rng.choice(SPACED)])
            mark = rng.choice(["", "", "", ".", "(", ","]) if glue else ""
            token = token[:at] + rng.choice([tag + mark, mark + tag, tag]) + token[at:]
        out.append(f"{rng.choice(['Recruiter pasted ', '<p>', ''])}{token} into the chat")
    return out


@pytest.mark.one_pass
def test_when_it_skips_html_text_html_text_reads_words_the_screen_already_scans():
    skipped = differs = 0
    texts = _texts(seed=43, count=2000, other=0.08)
    texts += _texts(seed=44, count=2000, other=0.0, lone=0.0)  # well nested: the skip's side
    for text in texts:
        ways = reading.readings(text, where=False)
        scanned = {reading._words(way.text) for way in ways}
        model = reading._words(reading.plain(text))
        if reading._read_as_spaced(text):
            skipped += "<" in text
            assert model in scanned, text
        elif model not in scanned:
            differs += 1
    # The generator reaches both sides: texts it skips, and texts html-text reads otherwise.
    assert skipped >= 300 and differs >= 100, (skipped, differs)


@pytest.mark.one_pass
def test_skipping_html_text_finds_the_same_credentials(monkeypatch):
    texts = _split_tokens(seed=8, count=300, glue=False)
    texts += _split_tokens(seed=7, count=300, glue=True)
    texts += _texts(seed=9, count=300, other=0.0)
    with_skip = [credentials.find_secrets(text) for text in texts]
    assert all(with_skip[:300]), "a token split by formatting tags went unseen"
    monkeypatch.setattr(reading, "_read_as_spaced", lambda text: False)
    assert [credentials.find_secrets(text) for text in texts] == with_skip


@pytest.mark.one_pass
@pytest.mark.parametrize(
    "text",
    [
        "ghp_<b></b>Vb4nQ8rT2xK6mZ1pL9wS3dF7hJ5gY0aC2eU4 in the chat",
        "abc<b></b>.def",  # html-text glues the full stop: "abc.def"
        "a (<i>b</i>) c",
        "x<table><td>y</td></table>z",
        "R&amp;D <b>team</b>",
        '<a title="x>y">z</a>',
        "5 <3 years<b></b>",
    ],
)
def test_it_skips_only_plain_formatting_between_words(text):
    expected = text.startswith("ghp_")
    assert reading._read_as_spaced(text) is expected
