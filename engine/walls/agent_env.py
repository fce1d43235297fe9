"""The environment the agent's commands get: arreio's, without its credentials.

`shell` and command gates run with the run's environment minus

- **provider API keys, always** — the model's keys are arreio's, never the agent's: `ANTHROPIC_API_KEY`,
  `OPENAI_API_KEY`, the keys of every provider litellm reaches (`GROQ_API_KEY`, `GEMINI_API_KEY`,
  `AWS_SECRET_ACCESS_KEY`, `HF_TOKEN`, …); no setting passes them through;
- **other secret-shaped variables, unless passed through by name** (`sandbox.env_passthrough`):
  names holding TOKEN, SECRET, PASSWORD/PASSWD/PASSPHRASE, CREDENTIAL, AUTH or ending in `_KEY`
  (`GITHUB_TOKEN`, `NPM_AUTH`, `DJANGO_SECRET_KEY`), values that carry a password in a URL
  (`DATABASE_URL=postgres://u:pw@db/x`) or a PEM private key, and whatever else the redactor would
  hide as a credential (`secret_env.looks_secret`).

```yaml
sandbox:
  env_passthrough: [NPM_TOKEN, "MYAPP_*"]   # names or globs; provider keys are never passed
```

A dropped name is not replaced by anything: the command sees it unset, as if it never was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from arreio.engine.walls.secret_env import URL_PASSWORD, looks_secret

__all__ = ["agent_env", "dropped_names", "is_provider_key"]

# Names the model providers and litellm read keys from (beyond the `*_API_KEY` shape, which is
# matched as a pattern): the agent never gets them.
_PROVIDER_NAMES = frozenset(
    {
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_ORG_ID",
        "OPENAI_ORGANIZATION",
        "OPENAI_PROJECT_ID",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AZURE_AD_TOKEN",
        "AZURE_CLIENT_SECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "VERTEXAI_CREDENTIALS",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HUGGINGFACE_HUB_TOKEN",
        "REPLICATE_API_TOKEN",
        "DATABRICKS_TOKEN",
        "WATSONX_APIKEY",
        "WATSONX_TOKEN",
        "CO_API_KEY",
        "LITELLM_MASTER_KEY",
        "GITHUB_COPILOT_TOKEN",
    }
)
# The providers arreio reaches itself or through litellm: their `<PREFIX>_API_KEY` (and the like) is
# a provider key; another program's `*_API_KEY` (`STRIPE_API_KEY`) is only secret-shaped.
_PROVIDERS = (
    "ANTHROPIC|OPENAI|AZURE|AZURE_OPENAI|AZURE_AI|GEMINI|GOOGLE|PALM|VERTEX|VERTEXAI|COHERE|CO|MISTRAL|CODESTRAL"
    "|GROQ|TOGETHER|TOGETHERAI|TOGETHER_AI|DEEPSEEK|XAI|OPENROUTER|HUGGINGFACE|HUGGING_FACE|HF|REPLICATE|FIREWORKS"
    "|FIREWORKS_AI|FIREWORKSAI|PERPLEXITY|PERPLEXITYAI|ANYSCALE|CEREBRAS|NVIDIA|NVIDIA_NIM|VOYAGE|AI21|NLP_CLOUD"
    "|ALEPH_ALPHA|DATABRICKS|WATSONX|CLOUDFLARE|DEEPINFRA|SAMBANOVA|FRIENDLIAI|FRIENDLI|NOVITA|LAMBDA|HYPERBOLIC"
    "|NEBIUS|OLLAMA|LM_STUDIO|LMSTUDIO|VLLM|HOSTED_VLLM|INFINITY|JINA|JINA_AI|VOLCENGINE|DASHSCOPE|MOONSHOT|ZHIPU"
    "|ZHIPUAI|BAICHUAN|MINIMAX|PREDIBASE|CLARIFAI|BASETEN|OCI|SAGEMAKER|BEDROCK|LITELLM|ARREIO|OPENAI_LIKE"
    "|FEATHERLESS|GALADRIEL|NSCALE|MARITALK|XINFERENCE|EMPOWER|AIML|LLAMA|SNOWFLAKE|GITHUB_MODELS|TEXTSYNTH"
    "|NLPCLOUD|ASSEMBLYAI|ELEVENLABS|DEEPGRAM|OPENAI_COMPATIBLE|LLAMA_API|META_LLAMA|V0|MORPH|HEROKU|DATAROBOT"
)
_PROVIDER_SHAPE = re.compile(
    rf"(?i)^(?:{_PROVIDERS})_(?:API_?KEY|APIKEY|KEY|TOKEN|API_TOKEN|SECRET|SECRET_KEY|ACCESS_TOKEN|AUTH_TOKEN)$"
)
_SECRET_NAME = re.compile(
    r"(?i)TOKEN(?!IZ)|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|_PWD$|(?:^|_)AUTH$|(?:^|_)PAT$|(?:^|_)KEY$"
)
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----|^[A-Za-z0-9+/=\s]{200,}$")


def is_provider_key(name: str) -> bool:
    """A name a model provider's key is read from (module docstring)."""
    return name.upper() in _PROVIDER_NAMES or _PROVIDER_SHAPE.search(name) is not None


def _secret(name: str, value: str) -> bool:
    if _SECRET_NAME.search(name):
        return True
    if URL_PASSWORD.search(value) or _PEM.search(value):
        return True
    return looks_secret(name, value)


def _passed(name: str, passthrough: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in passthrough)


def agent_env(env: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """`env` without arreio's credentials (module docstring)."""
    passthrough = tuple(passthrough)
    out: dict[str, str] = {}
    for name, value in env.items():
        if is_provider_key(name):
            continue
        if _secret(name, value) and not _passed(name, passthrough):
            continue
        out[name] = value
    return out


def dropped_names(env: Mapping[str, str], passthrough: Iterable[str] = ()) -> list[str]:
    """The names `agent_env` leaves out, sorted (for `arreio sandbox status`)."""
    kept = agent_env(env, passthrough)
    return sorted(name for name in env if name not in kept)
