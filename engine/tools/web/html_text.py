"""HTML → readable text for the model, with the stdlib parser (no dependency, no network).

Keeps what helps a reader: the title, headings as `#` lines, links as `[text](absolute url)`, list
items as `- `, preformatted blocks fenced, paragraphs separated by blank lines. Drops what does not:
scripts, styles, forms' inner machinery, SVG, navigation chrome is kept only as its link text.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = {"script", "style", "noscript", "svg", "template", "head", "iframe", "canvas", "select", "button"}
_BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "nav",
    "ul",
    "ol",
    "table",
    "tr",
    "blockquote",
    "figure",
    "figcaption",
    "form",
    "dl",
    "dt",
    "dd",
    "hr",
    "br",
    "address",
    "details",
}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "track", "wbr"}


class _Extractor(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.title = ""
        self.out: list[str] = []
        self._skip = 0
        self._in_title = False
        self._pre = 0
        self._link: str | None = None
        self._link_text: list[str] = []

    # -- structure ----------------------------------------------------------------------------------
    def _newline(self, blank: bool = False) -> None:
        self.out.append("\n\n" if blank else "\n")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
            return
        if tag == "base":
            href = dict(attrs).get("href")
            if href:
                self.base_url = urljoin(self.base_url, href)
        if tag in _SKIP:
            if tag not in _VOID:
                self._skip += 1
            return
        if self._skip:
            return
        if tag in _HEADINGS:
            self._newline(blank=True)
            self.out.append("#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self._newline()
            self.out.append("- ")
        elif tag == "pre":
            self._pre += 1
            self.out.append("\n\n```\n")
        elif tag in ("td", "th"):
            self.out.append(" | ")
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            if href and not href.startswith(("javascript:", "#", "mailto:")):
                self._link = urljoin(self.base_url, href)
                self._link_text = []
        elif tag == "img":
            alt = (dict(attrs).get("alt") or "").strip()
            if alt:
                self._text(f"[image: {alt}]")
        elif tag in _BLOCK:
            self._newline(blank=tag in ("p", "blockquote", "table", "ul", "ol", "hr"))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if tag in _SKIP:
            if tag not in _VOID and self._skip:
                self._skip -= 1
            return
        if self._skip:
            return
        if tag == "a" and self._link is not None:
            text = " ".join("".join(self._link_text).split())
            link, self._link = self._link, None
            self.out.append(f"[{text}]({link})" if text else "")
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            self.out.append("\n```\n\n")
        elif tag in _HEADINGS:
            self._newline(blank=True)
        elif tag in _BLOCK or tag == "li":
            self._newline(blank=tag in ("p", "blockquote", "table", "ul", "ol"))

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip:
            return
        self._text(data)

    def _text(self, data: str) -> None:
        if self._link is not None:
            self._link_text.append(data)
        elif self._pre:
            self.out.append(data)
        else:
            self.out.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str, base_url: str = "") -> tuple[str, str]:
    """(title, text) of an HTML document. Never raises on malformed markup."""
    parser = _Extractor(base_url)
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # noqa: BLE001, S110 — the stdlib parser is lenient; keep what was read so far
        pass
    return " ".join(parser.title.split()), _tidy("".join(parser.out))


def _tidy(text: str) -> str:
    lines: list[str] = []
    in_fence = False
    for raw in text.split("\n"):
        line = raw.rstrip()
        if line.strip() == "```":
            in_fence = not in_fence
        if not in_fence:
            line = line.strip()
            line = re.sub(r"^(\|\s*)+", "| ", line) if line.startswith("|") else line
        lines.append(line)
    out = "\n".join(lines)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip()
