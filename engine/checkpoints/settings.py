"""The `checkpoints:` section of config.yaml, validated here (the engine's Settings keeps it open).

```yaml
checkpoints:
  enabled: true        # snapshot the working tree around every tool round that may change it
  keep_days: 30        # runs older than this are pruned (the newest run of each folder is kept)
  max_total_mb: 1024   # past this, the oldest runs are pruned until the store fits
  max_file_mb: 10      # a bigger file is left out of checkpoints (and the report lists it)
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from arreio.engine.core.config import parse_section

if TYPE_CHECKING:
    from arreio.engine.core.config import Settings


class CheckpointSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="Checkpoint the working tree around tool rounds that may change it.")
    keep_days: float = Field(30, gt=0, description="Prune runs' checkpoints older than this (the newest run is kept).")
    max_total_mb: float = Field(1024, gt=0, description="Prune the oldest runs while the store is bigger than this.")
    max_file_mb: float = Field(10, gt=0, description="Files bigger than this are not checkpointed (and are listed).")

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    @property
    def max_total_bytes(self) -> int:
        return int(self.max_total_mb * 1024 * 1024)


def checkpoint_settings(settings: Settings) -> CheckpointSettings:
    """Validate `settings.checkpoints`; a bad value is one ConfigError naming the field."""

    return parse_section(CheckpointSettings, settings.checkpoints, "checkpoints")
