"""Tracing with OpenTelemetry: one trace per run, exported over OTLP/HTTP (protobuf) when an endpoint is
configured — config `tracing.endpoint`, else the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
`OTEL_EXPORTER_OTLP_ENDPOINT`. Without one nothing here imports OpenTelemetry; with one and without the
`otel` extra installed, the run says so in a warning and goes on untraced.

Spans follow the GenAI semantic conventions:

- the run: `invoke_agent arreio` (`gen_ai.operation.name=invoke_agent`, `gen_ai.agent.name`,
  `gen_ai.conversation.id` = the session id, the run's totals, verdict and cost);
- each model call: `chat <model>` (`gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.usage.*`
  with the cache's reads and writes, `gen_ai.response.finish_reasons`, `error.type`, and the call's
  estimated cost as `arreio.cost_usd`); retries of one step are one span;
- each tool call: `execute_tool <name>` (`gen_ai.tool.name`, `gen_ai.tool.call.id`, its duration,
  `error.type` when it failed).

No prompt, answer, argument or result is put in a span: what the traces hold is names, numbers and
statuses. The provider is the run's own (never the process-wide one a host program may have set),
exports happen on the SDK's worker thread, and the run's end waits for them at most
`tracing.flush_timeout_s`; a collector that is down costs a warning, never the run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core import events as ev
from arreio.engine.core.config import parse_section
from arreio.engine.loop.feature import Feature
from arreio.engine.loop.hooks import RunHook
from arreio.engine.loop.report import Section
from arreio.engine.tools.run_context import RunContext

if TYPE_CHECKING:
    from arreio.engine.loop.report import RunReport

__all__ = ["RunTrace", "TracingFeature", "TracingSettings", "traces_endpoint", "tracing_settings"]

TRACES_PATH = "/v1/traces"
INSTALL_HINT = "pip install 'arreio[otel]'"


class TracingSettings(BaseModel):
    """Config `tracing:`. `endpoint` is the collector's OTLP/HTTP address (`http://localhost:4318`;
    `/v1/traces` is added unless given); `headers` go with every export (an API key)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="false: never trace, whatever the environment says.")
    endpoint: str | None = Field(None, description="OTLP/HTTP endpoint; unset: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT.")
    headers: dict[str, str] = Field(default_factory=dict, description="Sent with every export (e.g. an API key).")
    service_name: str | None = Field(
        None, description="service.name of the traces (default OTEL_SERVICE_NAME, arreio)."
    )
    flush_timeout_s: float = Field(5.0, gt=0, le=120, description="Longest the run's end waits for its spans to go.")


def tracing_settings(settings: Any) -> TracingSettings:
    return parse_section(TracingSettings, settings.tracing, "tracing")


def traces_endpoint(config: TracingSettings, env: Mapping[str, str]) -> str | None:
    """Where the run's spans go, or None (no tracing). Config first; then the OTLP environment variables
    (a traces endpoint is used as it is, a base endpoint gets `/v1/traces`, as the OTLP spec says)."""
    if not config.enabled or env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if config.endpoint:
        base = config.endpoint.strip().rstrip("/")
        return base if base.endswith(TRACES_PATH) else base + TRACES_PATH
    if env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip():
        return env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].strip()
    if env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        return env["OTEL_EXPORTER_OTLP_ENDPOINT"].strip().rstrip("/") + TRACES_PATH
    return None


def export_headers(config: TracingSettings, env: Mapping[str, str]) -> dict[str, str]:
    """OTEL_EXPORTER_OTLP_(TRACES_)HEADERS (`k=v,k2=v2`, values URL-encoded), then config's own."""
    headers: dict[str, str] = {}
    for var in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        for pair in env.get(var, "").split(","):
            key, sep, value = pair.partition("=")
            if sep and key.strip():
                headers[unquote(key.strip()).lower()] = unquote(value.strip())
    return {**headers, **{k.lower(): v for k, v in config.headers.items()}}


def provider_name(model: str) -> str:
    """gen_ai.provider.name for a model string (the semantic conventions' values where one fits)."""
    head, sep, rest = model.partition("/")
    if not sep:
        lowered = model.lower()
        return "arreio.offline" if lowered == "offline" else "anthropic" if lowered.startswith("claude") else "openai"
    if head == "litellm":  # litellm/<provider>/<model>: the provider litellm calls
        inner = rest.partition("/")
        return inner[0] if inner[1] else "litellm"
    return head


class RunTrace:
    """One run's tracer provider, its root span, and the spans begun but not ended (per runner, per
    call). Built only when tracing is on; it imports the SDK."""

    def __init__(self, ctx: RunContext, endpoint: str, config: TracingSettings) -> None:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.ctx, self.endpoint, self.config = ctx, endpoint, config
        self.log = _route_sdk_logging(ctx.state_dir / "logs" / "tracing.log") if ctx.state_dir else None
        service = config.service_name or ctx.env.get("OTEL_SERVICE_NAME") or "arreio"
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}), shutdown_on_exit=False)
        self.exporter = _Counting(
            OTLPSpanExporter(endpoint=endpoint, headers=export_headers(config, ctx.env), timeout=config.flush_timeout_s)
        )
        self.provider.add_span_processor(BatchSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("arreio")
        self._trace = trace
        self.root = self.tracer.start_span(
            "invoke_agent arreio",
            kind=trace.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "arreio",
                "gen_ai.conversation.id": ctx.session_id,
                "arreio.run_id": ctx.run_id,
            },
        )
        self.parent = trace.set_span_in_context(self.root)
        self.model_started: dict[str, int] = {}  # runner (agent) → when its model call began (ns)
        self.tools_started: dict[str, int] = {}  # call id → when it began (ns)
        self.ended = False

    # -- model calls --------------------------------------------------------------------------------
    def model_call(self, agent: str, model: str, usage: Any, done: Any) -> None:
        from arreio.engine.providers.pricing import estimate_cost
        from arreio.engine.providers.registry import is_offline

        start = self.model_started.pop(agent, None) or time.time_ns()
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_name(model),
            "gen_ai.request.model": model,
            "gen_ai.response.model": model,
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
            "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
        }
        cost = 0.0 if is_offline(model) else estimate_cost(model, usage, self.ctx.settings.prices)
        if cost is not None:
            attributes["arreio.cost_usd"] = round(cost, 8)
        if agent:
            attributes["gen_ai.agent.name"] = agent
        error = None
        if done is not None:
            attributes["gen_ai.response.finish_reasons"] = [str(done.stop_reason)]
            error = done.error
            if error is not None:
                attributes["error.type"] = error.kind
        span = self.tracer.start_span(
            f"chat {model}",
            context=self.parent,
            kind=self._trace.SpanKind.CLIENT,
            attributes=attributes,
            start_time=start,
        )
        if error is not None:
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, error.message[:300]))
        span.end()

    # -- events: tool calls and the run's moments ---------------------------------------------------
    def event(self, event: Any) -> None:
        kind = event.type
        if kind == "tool_start":
            self.tools_started[event.call_id] = time.time_ns()
        elif kind == "tool_end":
            start = self.tools_started.pop(event.call_id, None) or time.time_ns()
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": event.name,
                "gen_ai.tool.call.id": event.call_id,
                "gen_ai.tool.type": "function",
                "arreio.tool.status": event.status,
            }
            if event.agent:
                attributes["gen_ai.agent.name"] = event.agent
            if event.is_error:
                attributes["error.type"] = event.status if event.status not in ("ok", "") else "tool_error"
            span = self.tracer.start_span(
                f"execute_tool {event.name}", context=self.parent, attributes=attributes, start_time=start
            )
            if event.is_error:  # the preview is the redacted first line the event already carries
                span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, event.preview[:300]))
            span.end()
        elif kind == "run_start":
            self.root.set_attributes(
                {
                    "gen_ai.request.model": event.model,
                    "gen_ai.conversation.id": event.session_id,
                    "arreio.resumed": event.resumed,
                }
            )
        elif kind in ("retry", "model_switch", "compaction", "ceiling", "approval_required", "gate_result", "warning"):
            self.root.add_event(kind, {k: v for k, v in _scalars(event).items() if k not in ("type", "message")})

    # -- the end ------------------------------------------------------------------------------------
    def finish(self, report: Any) -> str | None:
        """End the root span with the run's outcome and send what is left; a warning when spans were lost."""
        if self.ended:
            return None
        self.ended = True
        attributes = {
            "arreio.verdict": report.verdict,
            "arreio.exit_code": report.exit_code,
            "arreio.steps": report.steps,
            "arreio.tool_calls": report.tool_calls,
            "gen_ai.usage.input_tokens": report.input_tokens,
            "gen_ai.usage.output_tokens": report.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": report.cache_read_tokens,
            "gen_ai.usage.cache_creation.input_tokens": report.cache_write_tokens,
        }
        if report.cost_usd is not None:
            attributes["arreio.cost_usd"] = report.cost_usd
        self.root.set_attributes(attributes)
        if report.verdict not in ("success", "partial"):
            self.root.set_status(
                self._trace.Status(self._trace.StatusCode.ERROR, (report.message or report.verdict)[:300])
            )
            self.root.set_attribute("error.type", report.verdict)
        self.root.end()
        flushed = self.provider.force_flush(timeout_millis=int(self.config.flush_timeout_s * 1000))
        self.provider.shutdown()
        if self.exporter.lost or not flushed:
            lost = self.exporter.lost or "some"
            where = f"; the SDK's messages are in {self.log}" if self.log else ""
            return f"tracing: {lost} span(s) could not be sent to {self.endpoint} (is the collector running?){where}"
        return None


class _Counting:
    """The OTLP exporter, counting the spans it could not send (the run says so instead of a log line)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.lost = inner, 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        result = self.inner.export(spans)
        if result != SpanExportResult.SUCCESS:
            self.lost += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def _route_sdk_logging(path: Any) -> Any:
    """The SDK's own messages (an export retried, a batch dropped) go to `path`, not onto the terminal
    mid-run — unless the program arreio runs in has set up logging, which then gets them as usual.
    Returns the file, or None when they are left alone."""
    import logging

    logger = logging.getLogger("opentelemetry")
    if logging.getLogger().handlers:
        return None
    for handler in logger.handlers:
        if getattr(handler, "arreio_tracing", False):
            return handler.baseFilename
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    except OSError:
        return None
    handler.arreio_tracing = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    return path


def _scalars(event: Any) -> dict[str, Any]:
    return {k: v for k, v in event.model_dump().items() if isinstance(v, str | int | float | bool) and v is not None}


class _TracingHook(RunHook):
    """Times each model call of every runner of the run (sub-agents share the hooks) and hands it to the trace."""

    name = "tracing"

    def __init__(self, trace: RunTrace | None, warning: str | None) -> None:
        self.trace, self.warning = trace, warning

    def at_unit_start(self, turn: Any) -> list[ev.Event]:
        if self.warning is None:
            return []
        warning, self.warning = self.warning, None
        return [ev.Warning_(message=warning, code="tracing")]

    async def before_model(self, turn: Any, request: Any) -> None:
        if self.trace is not None:
            self.trace.model_started[turn.agent] = time.time_ns()
        return None

    def after_model(self, turn: Any, usage: Any) -> list[ev.Event]:
        if self.trace is not None:
            request = turn.last_request
            self.trace.model_call(
                turn.agent, request.model if request is not None else turn.model, usage, turn.last_done
            )
        return []


class TracingFeature(Feature):
    """Traces every run (docs/architecture.md: a capability lands once, on the conveyor) when an endpoint
    is configured; otherwise it does nothing and imports nothing."""

    name = "tracing"

    def check(self, ctx: RunContext) -> None:
        ctx.section(tracing_settings)

    def _state(self, ctx: RunContext) -> tuple[RunTrace | None, str | None]:
        return ctx.per_run(TracingFeature, lambda: _start(ctx))

    def hooks(self, ctx: RunContext) -> list[RunHook]:
        trace, warning = self._state(ctx)
        return [_TracingHook(trace, warning)] if trace is not None or warning is not None else []

    def on_event(self, ctx: RunContext, event: Any) -> None:
        trace, _ = self._state(ctx)
        if trace is not None:
            trace.event(event)

    def after_run(self, ctx: RunContext, report: RunReport) -> Section | None:
        trace, _ = self._state(ctx)
        warning = trace.finish(report) if trace is not None else None
        return Section(warnings=(warning,)) if warning else None


def _start(ctx: RunContext) -> tuple[RunTrace | None, str | None]:
    config = ctx.section(tracing_settings)
    endpoint = traces_endpoint(config, ctx.env)
    if endpoint is None:
        return None, None
    protocol = ctx.env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or ctx.env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    if protocol.strip() and protocol.strip() != "http/protobuf":
        return (
            None,
            f"tracing: OTLP protocol {protocol.strip()!r} is not supported (arreio sends http/protobuf); not traced",
        )
    try:
        return RunTrace(ctx, endpoint, config), None
    except ImportError:
        return None, (
            f"tracing: an OTLP endpoint is set ({endpoint}) but OpenTelemetry is not installed "
            f"({INSTALL_HINT}); not traced"
        )
