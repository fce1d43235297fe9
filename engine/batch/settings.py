"""The `batch:` section of config.yaml, validated here (the engine's Settings keeps it open).

```yaml
batch:
  workers: 2              # -j when not given: attempts at once on this machine
  retries: 2              # tries again for an attempt whose worker process (or Ray node) died
  ray:
    num_cpus: 1           # CPUs Ray reserves for each attempt
    object_store_mb: 256  # object store of the local runtime `--ray` starts (a cluster keeps its own)
    in_flight: null       # attempts submitted to Ray at once (null: the cluster's CPUs / num_cpus)
```
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.config import Settings, parse_section


class RaySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_cpus: float = Field(1.0, gt=0, description="CPUs Ray reserves for each attempt.")
    object_store_mb: int = Field(256, ge=64, description="Object store of the local runtime --ray starts.")
    in_flight: int | None = Field(None, ge=1, description="Attempts submitted at once (None: CPUs / num_cpus).")


class BatchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workers: int = Field(1, ge=1, description="Attempts at once on this machine when -j is not given.")
    retries: int = Field(2, ge=0, description="Tries again for an attempt whose worker or node died.")
    ray: RaySettings = Field(default_factory=RaySettings)


def batch_settings(settings: Settings) -> BatchSettings:
    return parse_section(BatchSettings, getattr(settings, "batch", None), "batch")
