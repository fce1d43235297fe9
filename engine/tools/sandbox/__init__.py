"""The OS sandbox the agent's commands run in (docs/architecture.md invariant 10: the agent stays in its room).

On Linux, each `shell` call and each command gate runs under bubblewrap (`bwrap`): the whole
filesystem read-only, the working directory read-write (`workspace-write`) or read-only too
(`read-only`); a private, size-capped `/tmp`; a minimal `/dev`, a fresh `/proc`; arreio's protected
paths (`engine/walls/protected.py`: the state folder, `.git`, arreio's config — made to exist
first where they are missing, so they can be mounted) read-only even inside the working directory,
and every nested repository pinned in place; no network unless `sandbox.network: true`; every
capability dropped (as root, a kept CAP_SYS_ADMIN could simply remount `/` read-write); a PID
namespace of its own with `--die-with-parent`, so no process — a `setsid … &` child included —
outlives its call; limits on processes, memory and file size (`limits.py`); an environment without
arreio's credentials (`governance/agent_env.py`). A `.git` or protected path the call creates anyway
is moved out of the working tree after it (`guard.py`). `bwrap` itself is found only where the agent
cannot have put it (`engine/core/programs.py`), and the probe checks that it really sandboxes.

```yaml
sandbox:
  mode: workspace-write      # read-only | off (off: shell runs as a plain subprocess)
  network: false             # true: share the host network (and the host's sockets under /run)
  writable_roots: [~/.cache] # extra folders shell may write in workspace-write mode
  limits: {processes: 1024, memory_mb: 8192, file_mb: 4096, tmp_mb: 1024}
  env_passthrough: [NPM_TOKEN]
```

Where the sandbox cannot run (no bwrap, not Linux, namespaces refused: probed once per process and
remembered), shell runs unsandboxed and the run says so once, as a `warning`; `mode: off` is the
user's choice and is said on every run too (`status.py` words it; `engine/features/sandbox.py` says it).
"""

from arreio.engine.tools.sandbox.limits import LimitSettings
from arreio.engine.tools.sandbox.plan import (
    Call,
    RunSandbox,
    SandboxPlan,
    bwrap_args,
    protected,
    refusal_hint,
    run_sandbox,
    sandbox_plan,
)
from arreio.engine.tools.sandbox.probe import Availability, Probe, availability, find_bwrap, probe_bwrap
from arreio.engine.tools.sandbox.settings import SandboxSettings, parse_sandbox, sandbox_settings
from arreio.engine.tools.sandbox.status import status, unsandboxed_warning

__all__ = [
    "Availability",
    "Call",
    "LimitSettings",
    "Probe",
    "RunSandbox",
    "SandboxPlan",
    "SandboxSettings",
    "availability",
    "bwrap_args",
    "find_bwrap",
    "parse_sandbox",
    "probe_bwrap",
    "protected",
    "refusal_hint",
    "run_sandbox",
    "sandbox_plan",
    "sandbox_settings",
    "status",
    "unsandboxed_warning",
]
