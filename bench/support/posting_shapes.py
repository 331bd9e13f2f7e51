"""The decision set's postings reshaped the way real ones arrive: as HTML (``as_html``) or long,
with their deciding sentences late (``late``)."""

import html
from dataclasses import replace


def as_html(text: str, *, escaped: bool = False) -> str:
    """A plain-text description as job boards' APIs deliver it: one line of HTML, its paragraphs
    as ``<p>``, its "- " bullets as a ``<ul>``, its short headings as ``<h3>``; or that HTML
    entity-escaped, as Greenhouse's job board API returns a posting's ``content``."""
    out: list[str] = []
    items: list[str] = []

    def close_list() -> None:
        if items:
            out.append("<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("- "):
            items.append(line[2:])
            continue
        close_list()
        if not line:
            continue
        if len(line.split()) <= 4 and not line.endswith("."):
            out.append(f"<h3><strong>{html.escape(line)}</strong></h3>")
        else:
            out.append(f"<p>{html.escape(line)}</p>")
    close_list()
    markup = "".join(out)
    return html.escape(markup) if escaped else markup


def late(subjects: list, chars: int) -> list:
    """Each posting with the following postings' descriptions put before its own until the
    whole is at least ``chars`` long: a long posting whose deciding sentences come late."""
    grown = []
    for i, s in enumerate(subjects):
        before, j = "", i + 1
        while len(before) + len(s.description) < chars:
            before += subjects[j % len(subjects)].description + "\n\n"
            j += 1
        grown.append(replace(s, description=before + s.description))
    return grown
