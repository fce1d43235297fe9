"""The run's changes as the checkpoints recorded them: evidence for the promise gate that does not
depend on file times (a file edited a moment before the run looked "changed since the run began")."""

from __future__ import annotations

from dataclasses import dataclass, field

from arreio.engine.checkpoints.recorder import Recorder
from arreio.engine.checkpoints.store import CheckpointError


@dataclass
class CheckpointChanges:
    """`RunChanges` from one run's recorder: the files that differ between its first checkpoint and
    its last. A path in neither tree (ignored, too big) or a git failure is "cannot tell". Without a
    recorder the run made no call that could change a file (checkpoints open one at the first)."""

    recorder: Recorder | None
    _changed: set[str] | None = field(default=None, init=False)

    def state(self, path: str) -> str | None:
        recorder = self.recorder
        if recorder is None or recorder.first is None or recorder.last is None:
            # No round that could change a file was checkpointed, so none ran: the run changed nothing.
            return "unchanged"
        try:
            if self._changed is None:
                self._changed = {d.path for d in recorder.repo.diff(recorder.first.tree, recorder.last.tree)}
            if path in self._changed:
                return "changed"
            if recorder.repo.holds(recorder.last.tree, path) and recorder.repo.holds(recorder.first.tree, path):
                return "unchanged"
        except (CheckpointError, OSError):
            return None
        return None
