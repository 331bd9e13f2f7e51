"""A plain-text description as job boards' APIs deliver it: one line of HTML, its paragraphs as
``<p>``, its "- " bullets as a ``<ul>``, its short headings as ``<h3>``; or that HTML
entity-escaped, as Greenhouse's job board API returns a posting's ``content``."""

import html


def as_html(text: str, *, escaped: bool = False) -> str:
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
