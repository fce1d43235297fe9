"""A saved session as one self-contained HTML page (`arreio sessions export ID --format html`).

Opened from a disk, a mail or a chat, the page fetches nothing: the style is inline, images are `data:`
URIs, there is no script, and a Content-Security-Policy forbids every load that is not inline (so even
a link the session holds cannot make the page fetch). Everything the session holds is escaped: what a
model or a tool wrote is shown, never interpreted. Thinking and long results are folded with
`<details>`, which needs no script.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from arreio.engine.core.messages import ImagePart, Message, ToolResultPart
from arreio.engine.session.transcript import FOLD_LINES, Entry, result_label, turns

__all__ = ["to_html"]

# Only raster formats a browser shows without fetching anything else; anything else is named, not embedded.
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

_STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0;
  --user: #ddf4ff; --assistant: #f6f8fa; --tool: #fff8c5; --error: #ffebe9; --code: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d;
  --user: #0c2d6b; --assistant: #151b23; --tool: #3b2e00; --error: #4b1113; --code: #151b23; } }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg);
  max-width: 58rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; color: var(--muted);
  margin: 0 0 1.5rem; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; overflow-wrap: anywhere; }
section.turn { border: 1px solid var(--line); border-radius: 8px; padding: .6rem 1rem; margin: 1rem 0; }
section.user { background: var(--user); } section.assistant { background: var(--assistant); }
section.tool { background: var(--tool); }
.who { font-weight: 700; margin-bottom: .3rem; } .who .model { font-weight: 400; color: var(--muted); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { background: var(--code); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .7rem;
  overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; font: 13px/1.4 ui-monospace, monospace; }
.call { border-left: 3px solid var(--line); padding-left: .7rem; margin: .6rem 0; }
.call .name { font-family: ui-monospace, monospace; font-weight: 600; }
.result.error pre { background: var(--error); }
.label { color: var(--muted); font-size: .9em; }
details > summary { cursor: pointer; color: var(--muted); }
img { max-width: 100%; border: 1px solid var(--line); }
footer { color: var(--muted); font-size: .85em; margin-top: 2rem; }
"""


def to_html(header: Any, messages: list[Message], runs: list[dict[str, Any]]) -> str:
    title = header.title or f"Session {header.id}"
    ended = [r for r in runs if r.get("event") == "end"]
    meta = [
        ("session", header.id),
        ("model", header.model),
        ("created", header.created_at),
        ("working directory", header.cwd),
    ]
    if ended:
        meta.append(("runs", f"{len(ended)} (last: {ended[-1].get('verdict', '?')} at {ended[-1].get('at', '?')})"))
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(title)}</h1>",
        '<dl class="meta">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in meta) + "</dl>",
    ]
    system = "\n\n".join(block.text for block in header.system)
    if system.strip():
        out.append(f"<details><summary>System prompt</summary><pre>{escape(system)}</pre></details>")
    for turn in turns(messages):
        who = {"user": "User", "assistant": "Assistant", "tool": "Tool results"}[turn.role]
        model = f' <span class="model">· {escape(turn.model)}</span>' if turn.role == "assistant" and turn.model else ""
        out.append(f'<section class="turn {turn.role}"><div class="who">{who}{model}</div>')
        out += [_entry(entry) for entry in turn.entries]
        out.append("</section>")
    out += [
        f"<footer>Exported by arreio from session {escape(header.id)}. Secrets appear as they were stored "
        "(redacted when written).</footer>",
        "</body>",
        "</html>",
    ]
    return "\n".join(out) + "\n"


def _entry(entry: Entry) -> str:
    if entry.kind == "text":
        return f'<div class="text">{escape(entry.text.strip())}</div>'
    if entry.kind == "thinking":
        return f'<details class="thinking"><summary>Thinking</summary><pre>{escape(entry.text)}</pre></details>'
    if entry.kind == "image":
        assert entry.image is not None
        return _image(entry.image)
    if entry.kind == "call":
        assert entry.call is not None
        args = json.dumps(entry.call.arguments, ensure_ascii=False, indent=2)
        result = _result(entry.result) if entry.result else '<div class="label">(no result recorded)</div>'
        return (
            f'<div class="call"><div>Tool call <span class="name">{escape(entry.call.name)}</span></div>'
            f"<pre>{escape(args)}</pre>{result}</div>"
        )
    assert entry.result is not None
    return (
        f'<div class="call"><div>Result of <span class="name">{escape(entry.result.name)}</span> '
        f'<span class="label">(its call is not in the session)</span></div>{_result(entry.result)}</div>'
    )


def _result(result: ToolResultPart) -> str:
    kind = "result error" if result.is_error else "result"
    label = escape(f"Result: {result_label(result)}")
    body = f"<pre>{escape(result.content or '(empty)')}</pre>" + "".join(_image(i) for i in result.images)
    if result.content.count("\n") + 1 > FOLD_LINES:
        return f'<details class="{kind}"><summary>{label}</summary>{body}</details>'
    return f'<div class="{kind}"><div class="label">{label}</div>{body}</div>'


def _image(image: ImagePart) -> str:
    size = len(image.data) * 3 // 4
    if image.media_type not in _IMAGE_TYPES or not _base64ish(image.data):
        return f'<div class="label">[image: {escape(image.media_type)}, {size:,} bytes, not embedded]</div>'
    return f'<img alt="image from the session ({size:,} bytes)" src="data:{image.media_type};base64,{image.data}">'


def _base64ish(data: str) -> bool:
    # The data goes into an attribute unescaped (escaping would corrupt it): only base64's alphabet may.
    return all(c.isalnum() or c in "+/=\n" for c in data) and data.isascii()
