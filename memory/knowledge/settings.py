"""The `knowledge:` section of `.arreio/config.yaml`, validated here (the engine's Settings keeps it
open), used by `arreio kb` and by the `kb_search` tool alike.

```yaml
knowledge:
  sentence_vectors: true   # embed each chunk's sentences too (default; doubles embedding time)
  vector_weight: 0.3       # RRF weight of the chunk-vector pass
  sentence_weight: 0.3     # ... of the best-sentence pass
  keyword_weight: 0.4      # ... of the keyword (FTS5 BM25) pass
  rrf_k: 60
  per_pass: 50             # candidates each pass contributes
  min_score: 0.5           # hits scoring below this (how well they match, 0..1) are not returned; 0: all
  sentence_pool: 500       # the sentence pass scores the keyword hits + this many nearest chunks (0: all)
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arreio.engine.core.config import parse_section
from arreio.memory.knowledge.fusion import FusionConfig

_DEFAULTS = FusionConfig()


class KnowledgeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)

    sentence_vectors: bool = Field(True, description="Embed each chunk's sentences for the best-sentence pass.")
    vector_weight: float = Field(
        _DEFAULTS.vector_weight, ge=0, le=1000, description="RRF weight of the chunk-vector pass."
    )
    sentence_weight: float = Field(
        _DEFAULTS.sentence_weight, ge=0, le=1000, description="RRF weight of the sentence pass."
    )
    keyword_weight: float = Field(
        _DEFAULTS.keyword_weight, ge=0, le=1000, description="RRF weight of the keyword pass."
    )
    rrf_k: int = Field(_DEFAULTS.k, ge=0, description="RRF's k: larger flattens the rank differences.")
    per_pass: int = Field(_DEFAULTS.per_pass, ge=1, le=1000, description="Candidates from each pass.")
    min_score: float = Field(
        _DEFAULTS.min_score,
        ge=0,
        le=1,
        description="Hits scoring below this (how well they match, 0..1) are not returned; 0 returns every candidate.",
    )
    sentence_pool: int = Field(
        _DEFAULTS.sentence_pool,
        ge=0,
        le=1_000_000,
        description="The sentence pass scores the keyword hits and this many nearest chunks (0: every chunk).",
    )

    @model_validator(mode="after")
    def _some_weight(self) -> KnowledgeSettings:
        if self.vector_weight + self.sentence_weight + self.keyword_weight <= 0:
            raise ValueError("at least one of vector_weight, sentence_weight, keyword_weight must be above 0")
        return self

    def fusion(self) -> FusionConfig:
        return FusionConfig(
            k=self.rrf_k,
            vector_weight=self.vector_weight,
            sentence_weight=self.sentence_weight,
            keyword_weight=self.keyword_weight,
            per_pass=self.per_pass,
            min_score=self.min_score,
            sentence_pool=self.sentence_pool,
        )


def parse_knowledge(raw: Mapping[str, Any] | None) -> KnowledgeSettings:
    """Validate the section; a mistake is one ConfigError naming the field (`knowledge.rrf_k`)."""
    return parse_section(KnowledgeSettings, raw, "knowledge")


def knowledge_settings(settings: Any) -> KnowledgeSettings:
    """The run's `knowledge:` section (`RunContext.section(knowledge_settings)` parses it once per run)."""
    return parse_knowledge(settings.knowledge)
