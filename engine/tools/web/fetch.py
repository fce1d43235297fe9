"""`web_fetch`: read a web page as text (HTML → markdown-ish, PDF → page-marked text, JSON pretty).

Only http(s). Every hop of a redirect chain is checked before it is requested: loopback, private,
link-local and other internal addresses are refused unless `web.allow_private` (a model that can make
the harness fetch `http://169.254.169.254/` or an admin page on the LAN is a hole). A host name is
resolved once per hop, and the connection goes to the address that was checked (the name travels in
the Host header and TLS SNI, and the certificate is verified against it): a DNS answer that changes
between the check and the connection (rebinding) cannot send the request inside. The download is
capped, the text shown is capped, and the result says how much it showed and how to read on.
Failures are readable and say what to do next — never a raw status dump.
"""

from __future__ import annotations

import asyncio
import io
import ipaddress
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.nesting import json_loads
from arreio.engine.tools.base import Tool, ToolError, ToolResult
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.web.config import WebSettings

_TEXTUAL = ("text/", "application/xml", "application/javascript", "application/x-yaml", "application/yaml")


class WebFetchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    max_chars: int | None = Field(None, ge=200, le=200_000)
    start: int = Field(0, ge=0)


class WebFetch(Tool):
    name = "web_fetch"
    description = "Read an http(s) page or PDF as markdown; a long one is cut and says the `start` to read on."
    input_model = WebFetchInput
    repeat = "paged"
    read_only = True

    def __init__(self, settings: WebSettings | None = None, *, resolve: Resolver | None = None) -> None:
        self.settings = settings or WebSettings()
        self.resolve = resolve or system_resolve
        self.timeout_s = self.settings.timeout_s + 5  # type: ignore[misc]  # our own timeout speaks first

    async def execute(self, args: WebFetchInput, ctx: RunContext) -> ToolResult:
        import httpx

        s = self.settings
        url = args.url.strip()
        _check_scheme(url)
        try:
            async with asyncio.timeout(s.timeout_s):
                final_url, ctype, body, cut = await self._download(url, httpx)
        except TimeoutError:
            raise ToolError(
                f"timed out after {s.timeout_s:g}s fetching {url} — the site is slow or unreachable; "
                "try again later or use another source",
                transient=True,
            ) from None
        title, text, kind = to_text(body, ctype, final_url)
        limit = args.max_chars or s.max_chars
        return ToolResult(content=_present(url, final_url, title, kind, text, args.start, limit, cut, s.max_bytes))

    async def _download(self, url: str, httpx: Any) -> tuple[str, str, bytes, bool]:
        s = self.settings
        headers = {"User-Agent": s.user_agent, "Accept": "text/html,application/xhtml+xml,application/pdf,*/*;q=0.8"}
        async with httpx.AsyncClient(follow_redirects=False, headers=headers, timeout=s.timeout_s) as client:
            for _hop in range(s.max_redirects + 1):
                address = await check_address(url, allow_private=s.allow_private, resolve=self.resolve)
                # Through a proxy the proxy connects (and resolves): the request keeps its name, or the
                # proxied TLS would check the certificate against an address.
                target, pin_headers, extensions = pinned(url, None if via_proxy(url) else address)
                try:
                    async with client.stream("GET", target, headers=pin_headers, extensions=extensions) as response:
                        if response.is_redirect and "location" in response.headers:
                            url = urljoin(url, response.headers["location"])
                            _check_scheme(url)
                            continue
                        _check_status(response.status_code, url)
                        body, cut = await _read_capped(response, s.max_bytes)
                        return url, response.headers.get("content-type", ""), body, cut
                except httpx.TimeoutException:
                    raise ToolError(
                        f"timed out fetching {url} — the site is slow or unreachable; try again later "
                        "or use another source",
                        transient=True,
                    ) from None
                except httpx.ConnectError as exc:
                    raise ToolError(_connect_message(url, exc)) from None
                except httpx.HTTPError as exc:
                    raise ToolError(f"fetching {url} failed: {type(exc).__name__}: {exc}", transient=True) from None
        raise ToolError(
            f"too many redirects (more than {s.max_redirects}) starting at {url} — the site redirects in "
            "a loop or needs a browser session; try another address for the same content"
        )


def _check_scheme(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"only http(s) addresses can be fetched, not {parts.scheme or 'a bare'!s}: {url[:200]}")
    if not parts.hostname:
        raise ToolError(f"the address has no host name: {url[:200]}")


def _blocked(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Everything that is not globally routable: private, loopback, link-local, shared address space
    (100.64.0.0/10, carrier NAT), IETF protocol assignments (192.0.0.0/24), documentation, benchmarking,
    reserved, multicast, unspecified — and the same behind an IPv4-mapped or NAT64/6to4 IPv6 form."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip.sixtofour is not None and not ip.sixtofour.is_global:
            return True
        elif ip in _NAT64 and not ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF).is_global:
            return True
    if isinstance(ip, ipaddress.IPv4Address) and ip in _IETF and ip not in _IETF_GLOBAL:
        return True
    return not ip.is_global or ip.is_multicast


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # a well-known prefix that embeds an IPv4 address
# IANA: 192.0.0.0/24 is not globally reachable but for two anycast addresses; older Pythons' table
# only knows part of it.
_IETF = ipaddress.IPv4Network("192.0.0.0/24")
_IETF_GLOBAL = (ipaddress.IPv4Address("192.0.0.9"), ipaddress.IPv4Address("192.0.0.10"))


# host name -> its addresses (as getaddrinfo gives them); tests pass their own
Resolver = Callable[[str], Awaitable[list[str]]]


async def system_resolve(host: str) -> list[str]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        reason = exc.strerror or exc
        raise ToolError(f"could not resolve the host name {host!r} ({reason}) — check the address") from None
    return [info[4][0] for info in infos]


async def check_address(url: str, *, allow_private: bool, resolve: Resolver = system_resolve) -> str | None:
    """Refuse a URL whose host is, or resolves to, an internal address (unless allowed). Returns the
    address to connect to — the one checked — or None when the URL already names an address."""
    host = urlsplit(url).hostname or ""
    try:
        addresses = [ipaddress.ip_address(host)]
        literal = True
    except ValueError:
        addresses = [ipaddress.ip_address(found.split("%")[0]) for found in await resolve(host)]
        literal = False
    if not addresses:
        raise ToolError(f"could not resolve the host name {host!r} (no addresses) — check the address")
    bad = [str(ip) for ip in addresses if _blocked(ip)]
    if bad and not allow_private:
        raise ToolError(
            f"refused: {host} is not a public address ({bad[0]}: loopback, private or otherwise not "
            "globally routable); fetching internal addresses is off — set web.allow_private in config "
            "if this is intended"
        )
    return None if literal else str(addresses[0])


def via_proxy(url: str) -> bool:
    """True when the environment sends this URL through a proxy (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY),
    as httpx reads it."""
    import urllib.request

    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


def pinned(url: str, address: str | None) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(URL to request, extra headers, httpcore extensions) that reach `address` while the site still
    sees its own name: in the Host header, and for https in SNI (so the certificate is checked for it)."""
    if address is None:
        return url, {}, {}
    parts = urlsplit(url)
    ip = f"[{address}]" if ":" in address else address
    port = f":{parts.port}" if parts.port else ""
    target = urlunsplit((parts.scheme, ip + port, parts.path or "/", parts.query, ""))
    host_header = (parts.hostname or "") + port
    extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
    return target, {"Host": host_header}, extensions


def _check_status(status: int, url: str) -> None:
    if status < 400:
        return
    if status in (401, 403):
        raise ToolError(
            f"the site refused automated access (HTTP {status}) at {url} — try a different source or ask the user"
        )
    if status in (404, 410):
        raise ToolError(
            f"page not found (HTTP {status}): {url} — check the address, or search for where the page moved"
        )
    if status == 429:
        raise ToolError(
            f"the site is rate-limiting requests (HTTP 429) at {url} — wait before trying again, or use another source",
            transient=True,
        )
    if status >= 500:
        raise ToolError(
            f"the site had a server error (HTTP {status}) at {url} — try again later or use another source",
            transient=True,
        )
    raise ToolError(f"the site rejected the request (HTTP {status}) at {url} — check the address and its parameters")


def _connect_message(url: str, exc: Exception) -> str:
    host = urlsplit(url).hostname
    text = f"{exc} {exc.__cause__ or ''}".lower()
    if "ssl" in text or "certificate" in text or "tls" in text:
        return (
            f"TLS error connecting to {host}: the site's certificate could not be verified — do not retry; use "
            "another source"
        )
    return f"could not connect to {host} ({str(exc) or type(exc).__name__}) — check the address, or the site is down"


async def _read_capped(response: Any, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


def _charset(ctype: str) -> str:
    for part in ctype.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


def _decode(body: bytes, ctype: str) -> str:
    try:
        return body.decode(_charset(ctype), errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def to_text(body: bytes, ctype: str, url: str) -> tuple[str, str, str]:
    """(title, text, kind) for a downloaded body; non-text content is a ToolError that says so."""
    mime = ctype.split(";")[0].strip().lower()
    if mime == "application/pdf" or body[:5] == b"%PDF-":
        return "", pdf_to_text(body), "pdf"
    if mime in ("text/html", "application/xhtml+xml") or (
        not mime and body.lstrip()[:15].lower().startswith((b"<!doctype", b"<html"))
    ):
        from arreio.engine.tools.web.html_text import html_to_text  # html.parser: with the first page, not every run

        title, text = html_to_text(_decode(body, ctype), url)
        return title, text, "html"
    if mime == "application/json" or mime.endswith("+json"):
        text = _decode(body, ctype)
        try:
            return "", json.dumps(json_loads(text), indent=2, ensure_ascii=False), "json"
        except ValueError:
            return "", text, "text"
    if mime.startswith(_TEXTUAL) or mime.endswith("+xml") or not mime:
        return "", _decode(body, ctype), "text"
    raise ToolError(
        f"non-text content ({mime}, {len(body):,} bytes) at {url} — web_fetch reads pages, PDFs, JSON and "
        "text; look for a text version of this resource"
    )


def pdf_to_text(body: bytes) -> str:
    """Text of every page, each under a `--- page N of M ---` marker."""

    from pypdf import PdfReader  # imported only for a PDF (a declared dependency)
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(body))
        pages = reader.pages
        out = []
        for i, page in enumerate(pages, 1):
            out.append(f"--- page {i} of {len(pages)} ---\n{(page.extract_text() or '').strip()}")
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise ToolError(
            f"the PDF could not be read ({type(exc).__name__}: {exc}) — it may be damaged or "
            "encrypted; look for an HTML version"
        ) from None
    return "\n\n".join(out) if out else "(the PDF has no pages)"


def _present(
    asked: str, final: str, title: str, kind: str, text: str, start: int, limit: int, cut: bool, max_bytes: int
) -> str:
    head = [f"URL: {final}" + (f" (redirected from {asked})" if final.rstrip("/") != asked.rstrip("/") else "")]
    if title:
        head.append(f"Title: {title}")
    total = len(text)
    window = text[start : start + limit]
    body = (
        "\n".join(head) + "\n\n" + (window if window else f"(nothing at start={start}; the text has {total:,} chars)")
    )
    end = start + len(window)
    notes = []
    if start > 0 or end < total:
        more = f"; call web_fetch again with start={end} to read on" if end < total else ""
        notes.append(f"showed chars {start:,}–{end:,} of {total:,}{more}")
    if cut:
        notes.append(f"the download stopped at {max_bytes:,} bytes, so the {kind} itself is larger than shown")
    if notes:
        body += "\n\n[" + "; ".join(notes) + "]"
    return body
