"""Tracing against a real OTLP/HTTP receiver on loopback: the exporter's POSTs are decoded from
protobuf (opentelemetry-proto) and the spans asserted — one trace per run, a span per model call and
per tool call, with the GenAI semantic conventions' attributes."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

from arreio.engine.core.model_io import Done, ProviderError, Usage  # noqa: E402
from arreio.engine.features.tracing import RunTrace, TracingSettings, provider_name, traces_endpoint  # noqa: E402
from arreio.engine.run.pipeline import RunOptions, run_sync  # noqa: E402
from arreio.engine.tools.run_context import RunContext  # noqa: E402

SCRIPT = """\
- tool_calls: [{name: read_file, arguments: {path: notes.md}}, {name: read_file, arguments: {path: missing.md}}]
  usage: {input_tokens: 1200, output_tokens: 40, cache_read_tokens: 1000, cache_write_tokens: 150}
- error: {status: 529, message: overloaded}
- text: "The notes say: ship on Friday."
  usage: {input_tokens: 1300, output_tokens: 12, cache_read_tokens: 1150}
"""


class Receiver:
    """An OTLP/HTTP traces endpoint on 127.0.0.1: every request body decoded, every span kept."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, ExportTraceServiceRequest]] = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.requests.append((self.path, self.headers.get("Content-Type", ""), request))
                receiver.headers = dict(self.headers)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()
                self.wfile.write(b"")

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list[dict]:
        out = []
        for _, _, request in self.requests:
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        out.append(
                            {
                                "name": span.name,
                                "trace": span.trace_id.hex(),
                                "id": span.span_id.hex(),
                                "parent": span.parent_span_id.hex(),
                                "kind": span.kind,
                                "status": span.status.code,
                                "status_message": span.status.message,
                                "start": span.start_time_unix_nano,
                                "end": span.end_time_unix_nano,
                                "attrs": {a.key: _value(a.value) for a in span.attributes},
                                "events": [e.name for e in span.events],
                                "resource": resource,
                            }
                        )
        return out

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _value(value) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("# Notes\n\nShip on Friday.\n")
    (work / "s.yaml").write_text(SCRIPT)
    return work


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ARREIO_"))}
    return {**env, "HOME": env.get("HOME", "/root"), **extra}


def test_a_run_is_one_trace_with_a_span_per_model_call_and_tool_call(tmp_path: Path, receiver: Receiver) -> None:
    work = _work(tmp_path)
    env = _env(
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        OTEL_SERVICE_NAME="arreio-test",
        OTEL_EXPORTER_OTLP_HEADERS="x-api-key=s3cr%3Dt",
    )
    events = run_sync(RunOptions(goal_text="What do the notes say?", script=work / "s.yaml", cwd=work, env=env))
    done = events[-1]
    assert done.verdict == "success"
    assert {path for path, _, _ in receiver.requests} == {"/v1/traces"}
    assert {kind for _, kind, _ in receiver.requests} == {"application/x-protobuf"}
    assert receiver.headers["x-api-key"] == "s3cr=t"
    spans = receiver.spans()
    (root,) = [s for s in spans if s["name"] == "invoke_agent arreio"]
    assert {s["trace"] for s in spans} == {root["trace"]} and root["parent"] == ""
    assert all(s["parent"] == root["id"] for s in spans if s is not root)
    assert root["resource"]["service.name"] == "arreio-test"
    assert root["attrs"]["gen_ai.operation.name"] == "invoke_agent"
    assert root["attrs"]["gen_ai.conversation.id"] == done.session_id
    assert root["attrs"]["arreio.verdict"] == "success" and root["attrs"]["arreio.cost_usd"] == 0.0
    assert root["attrs"]["gen_ai.usage.cache_read.input_tokens"] == 2150
    assert "retry" in root["events"]

    chats = sorted((s for s in spans if s["name"].startswith("chat ")), key=lambda s: s["start"])
    assert [c["name"] for c in chats] == ["chat offline", "chat offline"]  # the retried step is one call
    first, second = (c["attrs"] for c in chats)
    assert first["gen_ai.operation.name"] == "chat" and first["gen_ai.request.model"] == "offline"
    assert first["gen_ai.usage.input_tokens"] == 1200 and first["gen_ai.usage.output_tokens"] == 40
    assert first["gen_ai.usage.cache_read.input_tokens"] == 1000
    assert first["gen_ai.usage.cache_creation.input_tokens"] == 150
    assert first["gen_ai.response.finish_reasons"] == ["tool_use"] and first["arreio.cost_usd"] == 0.0
    assert (
        second["gen_ai.response.finish_reasons"] == ["end_turn"]
        and second["gen_ai.usage.cache_read.input_tokens"] == 1150
    )
    assert chats[0]["kind"] == 3  # SPAN_KIND_CLIENT

    tools = sorted((s for s in spans if s["name"].startswith("execute_tool ")), key=lambda s: s["start"])
    assert [t["name"] for t in tools] == ["execute_tool read_file", "execute_tool read_file"]
    ok, failed = sorted(tools, key=lambda t: "error.type" in t["attrs"])
    assert ok["attrs"]["gen_ai.tool.name"] == "read_file" and ok["status"] == 0 and ok["end"] >= ok["start"]
    assert failed["attrs"]["error.type"] == "error" and failed["status"] == 2  # STATUS_CODE_ERROR
    assert "missing.md" in failed["status_message"]
    assert {t["attrs"]["gen_ai.tool.call.id"] for t in tools} == {"call_0_0", "call_0_1"}
    # nothing the agent read or wrote travels in a span: names, numbers and statuses only
    assert "Ship on Friday" not in json.dumps(spans)


def test_a_model_call_that_fails_and_a_priced_model(tmp_path: Path, receiver: Receiver) -> None:
    ctx = RunContext(cwd=tmp_path, env={}, session_id="s-1", run_id="run-1")
    trace = RunTrace(ctx, receiver.url + "/v1/traces", TracingSettings())
    trace.model_started[""] = 1
    trace.model_call(
        "",
        "anthropic/claude-sonnet-4-5",
        Usage(input_tokens=1_000_000, output_tokens=0),
        Done(stop_reason="error", error=ProviderError(kind="fatal", message="401 invalid x-api-key")),
    )

    class Report:
        verdict, exit_code, message, steps, tool_calls = "failed", 5, "auth failed", 1, 0
        input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd = 1_000_000, 0, 0, 0, 3.0

    assert trace.finish(Report()) is None
    spans = {s["name"]: s for s in receiver.spans()}
    chat = spans["chat anthropic/claude-sonnet-4-5"]
    assert chat["attrs"]["gen_ai.provider.name"] == "anthropic" and chat["attrs"]["error.type"] == "fatal"
    assert chat["attrs"]["arreio.cost_usd"] == pytest.approx(3.0) and chat["status"] == 2
    assert spans["invoke_agent arreio"]["attrs"]["error.type"] == "failed"


def test_a_collector_that_is_down_costs_a_warning_not_the_run(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    work = _work(tmp_path)
    (work / ".arreio").mkdir()
    (work / ".arreio" / "config.yaml").write_text(
        f"tracing:\n  endpoint: http://127.0.0.1:{port}\n  flush_timeout_s: 2\n"
    )
    events = run_sync(RunOptions(goal_text="What do the notes say?", script=work / "s.yaml", cwd=work, env=_env()))
    report = json.loads((work / events[-1].report_path).read_text())
    assert events[-1].verdict == "success"
    assert any(w.startswith("tracing:") and "could not be sent" in w for w in report["warnings"])


def test_without_the_extra_the_run_says_so_and_is_not_traced(tmp_path: Path, receiver: Receiver) -> None:
    work = _work(tmp_path)
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"  # as if the otel extra were not installed
        "from arreio.cli.launch import main; main()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, "run", "hello", "--script", "s.yaml", "--json"],
        cwd=work,
        env=_env(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=receiver.url + "/v1/traces"),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    warnings = [
        e for e in map(json.loads, out.stdout.splitlines()) if e["type"] == "warning" and e["code"] == "tracing"
    ]
    assert len(warnings) == 1 and "pip install 'arreio[otel]'" in warnings[0]["message"]
    assert receiver.requests == []


def test_where_spans_go() -> None:
    config = TracingSettings()
    assert traces_endpoint(config, {}) is None
    assert traces_endpoint(config, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}) == "http://c:4318/v1/traces"
    assert traces_endpoint(config, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/x"}) == "http://c/x"
    assert traces_endpoint(TracingSettings(endpoint="http://c:4318"), {}) == "http://c:4318/v1/traces"
    assert traces_endpoint(config, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_SDK_DISABLED": "true"}) is None
    assert traces_endpoint(TracingSettings(enabled=False, endpoint="http://c"), {}) is None
    assert [
        provider_name(m) for m in ("offline", "claude-x", "gpt-5", "openai/gpt-5", "litellm/groq/llama", "litellm/x")
    ] == ["arreio.offline", "anthropic", "openai", "openai", "groq", "litellm"]
