"""web_fetch and web_search against a local HTTP server (127.0.0.1 only; no network)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from arreio.engine.core.errors import ConfigError
from arreio.engine.tools.chain import run_tool
from arreio.engine.tools.registry import ToolRegistry
from arreio.engine.tools.run_context import RunContext
from arreio.engine.tools.web.config import SearchSettings, WebSettings, parse_web
from arreio.engine.tools.web.fetch import WebFetch
from arreio.engine.tools.web.html_text import html_to_text
from arreio.engine.tools.web.search import WebSearch, make_backend
from tests.families.conftest import make_pdf, reply

PAGE = """<!doctype html><html><head><title>Release notes · Widget</title><style>body{color:red}</style>
<script>var tracking = 1;</script></head><body>
<nav><a href="/">Home</a></nav>
<h1>Widget 2.0</h1><p>The <b>new</b> widget is <a href="/docs/intro.html">documented here</a>.</p>
<h2>Changes</h2><ul><li>Faster start-up</li><li>Fewer bugs</li></ul>
<pre>pip install widget==2.0</pre>
</body></html>"""


def fetch(url: str, *, allow_private: bool = True, **args):
    tool = WebFetch(WebSettings(allow_private=allow_private, timeout_s=3, max_redirects=3, max_chars=2000))
    return asyncio.run(run_tool(ToolRegistry([tool]), "web_fetch", {"url": url, **args}, RunContext(cwd=".")))


def test_html_page_becomes_readable_markdownish_text(local_server) -> None:
    local_server.routes["/notes.html"] = reply(200, PAGE)
    result = fetch(local_server.url + "/notes.html")
    assert not result.is_error, result.content
    text = result.content
    assert "Title: Release notes · Widget" in text
    assert "# Widget 2.0" in text and "## Changes" in text and "- Faster start-up" in text
    assert f"[documented here]({local_server.url}/docs/intro.html)" in text
    assert "```\npip install widget==2.0\n```" in text
    assert "tracking" not in text and "color:red" not in text
    assert "showed chars" not in text  # the whole page fit


def test_pdf_becomes_page_marked_text(local_server) -> None:
    local_server.routes["/paper.pdf"] = reply(
        200, make_pdf(["Hello from page one", "Goodbye on page two"]), "application/pdf"
    )
    result = fetch(local_server.url + "/paper.pdf")
    assert not result.is_error, result.content
    assert "--- page 1 of 2 ---\nHello from page one" in result.content
    assert "--- page 2 of 2 ---\nGoodbye on page two" in result.content


def test_json_is_pretty_printed(local_server) -> None:
    local_server.routes["/api"] = reply(200, json.dumps({"name": "widget", "tags": ["a", "b"]}), "application/json")
    result = fetch(local_server.url + "/api")
    assert '{\n  "name": "widget",\n  "tags": [\n    "a",' in result.content


def test_redirects_are_followed_within_a_bound_and_a_loop_is_named(local_server) -> None:
    local_server.routes["/old"] = reply(301, "", headers={"Location": "/notes.html"})
    local_server.routes["/notes.html"] = reply(200, PAGE)
    moved = fetch(local_server.url + "/old")
    assert f"URL: {local_server.url}/notes.html (redirected from {local_server.url}/old)" in moved.content
    local_server.routes["/loop"] = reply(302, "", headers={"Location": "/loop"})
    looped = fetch(local_server.url + "/loop")
    assert looped.is_error and "too many redirects (more than 3)" in looped.content and "loop" in looped.content
    assert [p for p, _ in local_server.requests].count("/loop") == 4


@pytest.mark.parametrize(
    ("status", "needle", "transient"),
    [
        (403, "the site refused automated access (HTTP 403)", False),
        (401, "try a different source or ask the user", False),
        (404, "page not found (HTTP 404)", False),
        (503, "server error (HTTP 503)", True),
        (429, "rate-limiting", True),
    ],
)
def test_http_failures_are_readable_and_suggest_a_next_step(local_server, status, needle, transient) -> None:
    local_server.routes["/x"] = reply(status, "<h1>nope</h1>")
    result = fetch(local_server.url + "/x")
    assert result.is_error and needle in result.content
    assert ("temporary failure" in result.content) == transient
    assert "<h1>" not in result.content


def test_huge_page_is_cut_with_the_count_and_can_be_paged(local_server) -> None:
    body = (
        "<html><body>" + "".join(f"<p>paragraph {i:05d} " + "x" * 80 + "</p>" for i in range(3000)) + "</body></html>"
    )
    local_server.routes["/huge"] = reply(200, body)
    first = fetch(local_server.url + "/huge")
    assert not first.is_error
    total = int(first.content.split(" of ")[1].split(";")[0].replace(",", ""))
    assert total > 250_000
    assert f"[showed chars 0–2,000 of {total:,}; call web_fetch again with start=2000 to read on]" in first.content
    assert len(first.content) < 2_400
    second = fetch(local_server.url + "/huge", start=2000, max_chars=500)
    assert "showed chars 2,000–2,500" in second.content and "paragraph 00000" not in second.content


def test_download_is_capped(local_server) -> None:
    local_server.routes["/big.txt"] = reply(200, "y" * 200_000, "text/plain")
    tool = WebFetch(WebSettings(allow_private=True, max_bytes=50_000, max_chars=1000))
    result = asyncio.run(
        run_tool(ToolRegistry([tool]), "web_fetch", {"url": local_server.url + "/big.txt"}, RunContext(cwd="."))
    )
    assert "of 50,000" in result.content and "download stopped at 50,000 bytes" in result.content


def test_loopback_and_private_addresses_are_refused_by_default(local_server) -> None:
    local_server.routes["/notes.html"] = reply(200, PAGE)
    for url in (
        local_server.url + "/notes.html",
        f"http://localhost:{local_server.httpd.server_port}/notes.html",
        "http://10.1.2.3/admin",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:9/",
    ):
        result = fetch(url, allow_private=False)
        assert result.is_error and "not a public address" in result.content and "web.allow_private" in result.content
    assert local_server.requests == []  # refused before any request left


def test_the_per_hop_address_check_refuses_internal_and_passes_public_literals() -> None:
    # Every redirect hop goes through this check before it is requested (no test can start from a public host).
    from arreio.engine.tools.base import ToolError
    from arreio.engine.tools.web.fetch import check_address

    with pytest.raises(ToolError, match="not a public address"):
        asyncio.run(check_address("http://127.0.0.2/x", allow_private=False))
    asyncio.run(check_address("http://93.184.216.34/x", allow_private=False))  # a public literal: no lookup needed


@pytest.mark.parametrize(
    "address",
    [
        "100.64.0.1",
        "100.127.255.254",  # shared address space (carrier NAT)
        "192.0.0.8",
        "192.0.2.10",
        "198.18.0.1",
        "198.51.100.7",
        "203.0.113.9",  # protocol, benchmark, documentation
        "240.0.0.1",
        "0.0.0.0",
        "224.0.0.251",
        "255.255.255.255",  # reserved, unspecified, multicast, broadcast
        "[fc00::1]",
        "[fe80::1]",
        "[2001:db8::1]",
        "[::ffff:10.0.0.1]",
        "[64:ff9b::a00:1]",
        "[2002:a00:1::1]",
    ],
)
def test_every_address_that_is_not_globally_routable_is_refused(address: str) -> None:
    """Before: only `is_private` and a few others were refused, so 100.64.0.0/10 and friends passed."""
    from arreio.engine.tools.base import ToolError
    from arreio.engine.tools.web.fetch import check_address

    with pytest.raises(ToolError, match="not a public address"):
        asyncio.run(check_address(f"http://{address}/x", allow_private=False))


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "[2606:4700:4700::1111]", "[64:ff9b::5db8:d822]"])
def test_public_addresses_pass(address: str) -> None:
    from arreio.engine.tools.web.fetch import check_address

    asyncio.run(check_address(f"http://{address}/x", allow_private=False))


class FakeDns:
    """Answers from a table and counts the lookups; the second answer for a name can differ
    (a rebinding DNS server does exactly that)."""

    def __init__(self, **answers: list[list[str]]) -> None:
        self.answers = {name.replace("_", "."): list(seq) for name, seq in answers.items()}
        self.asked: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.asked.append(host)
        seq = self.answers[host]
        return seq.pop(0) if len(seq) > 1 else seq[0]


def test_the_checked_address_is_the_one_connected_to(local_server) -> None:
    local_server.routes["/page.html"] = reply(200, PAGE)
    port = local_server.httpd.server_port
    # "docs.test" exists only in the fake DNS: had the client resolved the name again, it would fail.
    dns = FakeDns(docs_test=[["127.0.0.1"], ["10.1.2.3"]])
    tool = WebFetch(WebSettings(allow_private=True, timeout_s=60), resolve=dns)
    result = asyncio.run(
        run_tool(ToolRegistry([tool]), "web_fetch", {"url": f"http://docs.test:{port}/page.html"}, RunContext(cwd="."))
    )
    assert not result.is_error and "Widget 2.0" in result.content, result.content
    assert dns.asked == ["docs.test"]  # one lookup for the one hop
    path, headers = local_server.requests[-1]
    assert path == "/page.html" and headers["Host"] == f"docs.test:{port}"  # the site saw its own name


def test_a_name_that_resolves_inside_is_refused_before_any_connection(local_server) -> None:
    dns = FakeDns(intranet_test=[["10.0.0.7"]])
    tool = WebFetch(WebSettings(allow_private=False, timeout_s=3), resolve=dns)
    result = asyncio.run(
        run_tool(ToolRegistry([tool]), "web_fetch", {"url": "http://intranet.test/admin"}, RunContext(cwd="."))
    )
    assert result.is_error and "intranet.test is not a public address (10.0.0.7" in result.content


def test_pinned_requests_keep_the_name_for_host_and_tls() -> None:
    from arreio.engine.tools.web.fetch import pinned

    assert pinned("https://example.org/a?b=1", "93.184.216.34") == (
        "https://93.184.216.34/a?b=1",
        {"Host": "example.org"},
        {"sni_hostname": "example.org"},
    )
    assert pinned("http://example.org:8080", "2606:2800:220:1::") == (
        "http://[2606:2800:220:1::]:8080/",
        {"Host": "example.org:8080"},
        {},
    )
    assert pinned("http://93.184.216.34/x", None) == ("http://93.184.216.34/x", {}, {})


def test_only_http_and_https(local_server) -> None:
    for url in ("file:///etc/passwd", "ftp://example.com/x", "example.com"):
        result = fetch(url)
        assert result.is_error and "only http(s) addresses" in result.content


def test_non_text_content_is_refused_readably(local_server) -> None:
    local_server.routes["/logo.png"] = reply(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "image/png")
    result = fetch(local_server.url + "/logo.png")
    assert result.is_error and "non-text content (image/png, 108 bytes)" in result.content


def test_a_slow_site_times_out_readably(local_server) -> None:
    def slow(h):
        time.sleep(2)
        reply(200, "late")(h)

    local_server.routes["/slow"] = slow
    tool = WebFetch(WebSettings(allow_private=True, timeout_s=0.5))
    result = asyncio.run(
        run_tool(ToolRegistry([tool]), "web_fetch", {"url": local_server.url + "/slow"}, RunContext(cwd="."))
    )
    # the reply came after 2 s: "timed out" says the 0.5 s timeout ended the call, not the reply
    assert result.is_error and "timed out" in result.content and "temporary failure" in result.content


def test_connection_refused_is_readable() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = fetch(f"http://127.0.0.1:{port}/")
    assert result.is_error and "could not connect to 127.0.0.1" in result.content


def test_html_to_text_survives_broken_markup() -> None:
    title, text = html_to_text("<html><title>T</title><p>one<p>two <a href='x'>link", "http://h/base/")
    assert title == "T" and "one" in text and "two" in text


# -- web_search ---------------------------------------------------------------------------------------
BRAVE_REPLY = {
    "type": "search",
    "query": {"original": "widget release"},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "Widget <strong>2.0</strong> released",
                "url": "https://widget.example/news",
                "description": "The <strong>widget</strong> team shipped 2.0 &amp; more.",
            },
            {"title": "Widget docs", "url": "https://docs.widget.example/", "description": "Reference."},
            {"title": "Third", "url": "https://third.example/", "description": ""},
        ],
    },
}


def search(local_server, query="widget release", k=None, key="secret-key"):
    settings = SearchSettings(backend="brave", base_url=local_server.url + "/res/v1/web/search")
    backend, why = make_backend(settings, {"BRAVE_API_KEY": key} if key else {})
    tool = WebSearch(backend, why_not=why)
    args = {"query": query} if k is None else {"query": query, "k": k}
    return tool, asyncio.run(run_tool(ToolRegistry([tool]), "web_search", args, RunContext(cwd=".")))


def test_web_search_speaks_the_brave_api(local_server) -> None:
    local_server.routes["/res/v1/web/search"] = reply(200, json.dumps(BRAVE_REPLY), "application/json")
    _, result = search(local_server, k=2)
    assert not result.is_error, result.content
    assert result.content.startswith("2 result(s) for 'widget release' (brave):")
    assert (
        "1. Widget 2.0 released\n   https://widget.example/news\n   The widget team shipped 2.0 & more."
        in result.content
    )
    assert "Third" not in result.content
    path, headers = local_server.requests[0]
    assert "q=widget+release" in path and "count=2" in path
    assert headers["X-Subscription-Token"] == "secret-key"


def test_web_search_failures_are_readable(local_server) -> None:
    local_server.routes["/res/v1/web/search"] = reply(401, "{}", "application/json")
    _, refused = search(local_server)
    assert refused.is_error and "refused the API key (HTTP 401)" in refused.content
    local_server.routes["/res/v1/web/search"] = reply(429, "{}", "application/json")
    _, limited = search(local_server)
    assert limited.is_error and "rate limit" in limited.content and "temporary" in limited.content


def test_web_search_is_not_offered_without_a_backend_or_key(local_server) -> None:
    tool, _ = search(local_server, key=None)
    assert "needs $BRAVE_API_KEY" in tool.unavailable(None)
    backend, why = make_backend(None, {})
    assert backend is None and "no search backend configured" in WebSearch(backend, why_not=why).unavailable(None)


def test_web_config_mistakes_name_the_field() -> None:
    with pytest.raises(ConfigError, match="web.search.backend"):
        parse_web({"search": {"backend": "altavista"}})
    with pytest.raises(ConfigError, match="web.allow_privat"):
        parse_web({"allow_privat": True})
    assert parse_web(None).allow_private is False


def test_behind_a_proxy_the_request_keeps_its_name(monkeypatch) -> None:
    from arreio.engine.tools.web.fetch import via_proxy

    for var in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ):
        monkeypatch.delenv(var, raising=False)
    assert not via_proxy("https://example.org/")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", "intranet.corp")
    assert via_proxy("https://example.org/")  # the proxy checks the certificate: no address pinning
    assert not via_proxy("http://example.org/") and not via_proxy("https://intranet.corp/")
