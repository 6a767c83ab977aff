"""A passage's text on the label page, character for character, and its evidence spans.

A span is saved as characters ``[start, end)`` of the passage's *stored* text, counted in
code points as Python indexes strings. The page counts on the text of the DOM, so the DOM
must hold the stored text one code point for one code point. The HTML parser does not keep
every character as written: it turns CR LF and a lone CR into LF (which shifted every span
after a Windows line end), and drops U+0000. So the text is written with each CR as the
character reference ``&#13;`` (which the parser keeps as U+000D), and each U+0000 and lone
surrogate (which no page can hold) as U+FFFD — one character for one. The page also sends
the text it selected; :func:`selection_matches` checks it against the stored text, so that
a selection the page counted wrongly is refused, never saved at the wrong place.

The annotator's saved spans are drawn in the text as ``<mark>`` (overlapping spans split
into pieces, each piece naming every span that covers it) and listed below it, each with a
form that takes it back.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from markupsafe import Markup, escape

from ragmeter.web.labels import SpanRow

#: what no HTML page can hold as text: U+0000 and lone surrogates (from JSON ``"\ud800"``)
_UNSHOWABLE = re.compile("[\x00\ud800-\udfff]")
#: the text of a passage the corpus has none for
NO_TEXT = Markup('<span class="muted">(no text for this passage in the corpus)</span>')


def shown_text(text: str) -> str:
    """``text`` as the page's DOM holds it: the same length, U+0000 and lone surrogates as
    U+FFFD."""
    return _UNSHOWABLE.sub("\ufffd", text)


def _html(text: str) -> str:
    """``text`` escaped so that the DOM's text is :func:`shown_text` of it, CRs included."""
    return str(escape(shown_text(text))).replace("\r", "&#13;")


def passage_html(text: str | None, spans: Sequence[SpanRow] = ()) -> Markup:
    """The passage's text as the content of its ``.ptext`` element, ``spans`` marked."""
    if text is None:
        return NO_TEXT
    if not spans:
        return Markup(_html(text))
    cuts = sorted({0, len(text), *(s.start for s in spans), *(s.end for s in spans)})
    pieces = []
    for a, b in itertools.pairwise(cuts):
        if a >= len(text):
            break
        covering = [s for s in spans if s.start <= a and b <= s.end]
        piece = _html(text[a:b])
        if covering:
            ids = " ".join(str(s.id) for s in covering)
            grade = max(s.grade for s in covering)
            piece = f'<mark class="evidence e{grade}" data-span-ids="{ids}">{piece}</mark>'
        pieces.append(piece)
    return Markup("".join(pieces))


def spans_html(text: str | None, spans: Sequence[SpanRow], token: str) -> Markup:
    """The list items of the saved spans, each with its offsets, grade and a remove form
    (a plain form post: the page's script sends it with ``fetch``)."""
    items = []
    for s in spans:
        quoted = escape(shown_text(text[s.start : s.end])) if text is not None else ""
        items.append(
            f'<li data-span-id="{s.id}"><mark class="evidence e{s.grade}">“{quoted}”</mark> '
            f'<span class="muted">[{s.start}, {s.end}) grade {s.grade}</span> '
            '<form method="post" action="/api/span/remove" class="span-remove">'
            f'<input type="hidden" name="csrf_token" value="{escape(token)}">'
            f'<input type="hidden" name="id" value="{s.id}">'
            f'<button type="submit" data-remove title="take this span back">remove</button>'
            "</form></li>"
        )
    return Markup("".join(items))


def selection_matches(text: str, start: int, end: int, selected: str) -> bool:
    """Whether ``selected`` (the text the page selected) is characters ``[start, end)`` of
    the stored ``text`` as the page shows them."""
    return shown_text(text[start:end]) == selected
