"""Secrets — none in any file, whatever the path.

The corpus in `fixtures/secrets/`: `hostile.yaml` (texts holding secrets, each listed), `benign.yaml`
(ordinary texts that must come out byte for byte unchanged: a false alarm costs more than a miss,
invariant 9 in docs/architecture.md) and `env.yaml` (environment variables `looks_secret` must / must not pick); and
`spellings.yaml` (known secrets reversed, in base64, hex, percent-encoded, broken in pieces, wrapped;
key bodies without their BEGIN line; secret shapes) with its honest look-alikes, `lookalikes.yaml`
(base64, hex hashes, git SHAs, UUIDs, URLs, certificates, public keys), reported per category.
Every case is also checked for idempotence (redacting twice == once), JSON-safety (redacting the
JSON-encoded text decodes to the redacted text) and streaming (a secret split across deltas).
Then one run through the real CLI, recorded, whose files and printed events must hold none of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from arreio.engine.core import events as ev
from arreio.engine.walls.delta_guard import DeltaGuard
from arreio.engine.walls.redact import CASSETTE, Redactor
from arreio.engine.walls.secret_env import looks_secret

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "secrets"
_yaml = YAML(typ="safe")
SPELLINGS: list[dict] = _yaml.load((CORPUS / "spellings.yaml").read_text())
LOOKALIKES: list[dict] = _yaml.load((CORPUS / "lookalikes.yaml").read_text())
HOSTILE: list[dict] = _yaml.load((CORPUS / "hostile.yaml").read_text()) + SPELLINGS
BENIGN: list[dict] = _yaml.load((CORPUS / "benign.yaml").read_text()) + LOOKALIKES
ENV: dict[str, list[dict]] = _yaml.load((CORPUS / "env.yaml").read_text())
# A realistic environment for the benign texts: its secrets appear in none of them.
BENIGN_ENV = {
    "MY_API_KEY": "sk-test-Zq8vN3xL0pR7tY2wK9mB4cD6",
    "DB_PASSWORD": "hunter2-correct-horse-battery",
    "PGPASSWORD": "pgS3cret-99x",
    "HOME": "/home/dev",
    "PATH": "/usr/bin:/bin",
    "DEBUG_TOKEN": "1",
}


def _redactor(case: dict) -> Redactor:
    return Redactor.from_env(case.get("env") or (BENIGN_ENV if case in BENIGN else {}))


def _ids(cases: list[dict]) -> list[str]:
    return [case["id"] for case in cases]


def test_the_corpus_is_big_enough_and_well_formed() -> None:
    assert len(HOSTILE) >= 50 and len(BENIGN) >= 80
    assert len(set(_ids(HOSTILE + BENIGN))) == len(HOSTILE + BENIGN)
    assert all(case["secrets"] and all(s in case["text"] for s in case["secrets"]) for case in HOSTILE)
    assert all(k in case["text"] for case in HOSTILE for k in case.get("keep", []))


@pytest.mark.parametrize("case", HOSTILE, ids=_ids(HOSTILE))
def test_every_listed_secret_is_gone_and_its_place_stays(case: dict) -> None:
    out = _redactor(case).text(case["text"])
    assert [s for s in case["secrets"] if s in out] == [], out
    assert [k for k in case.get("keep", []) if k not in out] == [], out


@pytest.mark.parametrize("case", BENIGN, ids=_ids(BENIGN))
def test_ordinary_text_is_left_byte_for_byte(case: dict) -> None:
    assert _redactor(case).text(case["text"]) == case["text"]


def test_precision_and_recall_on_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    """Recall: listed secrets removed / listed. Precision: texts changed that hold a secret / texts
    changed (a benign text changed is a false alarm)."""
    found = sum(s not in _redactor(c).text(c["text"]) for c in HOSTILE for s in c["secrets"])
    listed = sum(len(c["secrets"]) for c in HOSTILE)
    changed_hostile = sum(_redactor(c).text(c["text"]) != c["text"] for c in HOSTILE)
    false_alarms = sum(_redactor(c).text(c["text"]) != c["text"] for c in BENIGN)
    precision, recall = changed_hostile / (changed_hostile + false_alarms), found / listed
    with capsys.disabled():
        print(
            f"\nsecret corpus: {len(HOSTILE)} hostile ({listed} secrets), {len(BENIGN)} benign: "
            f"precision {precision:.3f}, recall {recall:.3f}"
        )
    assert precision == 1.0 and recall == 1.0


def test_recall_and_precision_per_spelling_category(capsys: pytest.CaptureFixture[str]) -> None:
    """The spellings corpus by category: recall (listed secrets removed / listed) and precision (texts
    changed that hold a secret / texts changed) over its look-alikes of the same category."""
    rows: dict[str, list[int]] = {}  # category -> [found, listed, hostile changed, look-alikes, false alarms]
    for case in SPELLINGS:
        out = _redactor(case).text(case["text"])
        row = rows.setdefault(case["category"], [0, 0, 0, 0, 0])
        row[0] += sum(s not in out for s in case["secrets"])
        row[1] += len(case["secrets"])
        row[2] += out != case["text"]
    for case in LOOKALIKES:
        row = rows.setdefault(case["category"], [0, 0, 0, 0, 0])
        row[3] += 1
        row[4] += _redactor(case).text(case["text"]) != case["text"]
    with capsys.disabled():
        print(f"\n{'category':<12} {'cases':>5} {'recall':>8} {'look-alikes':>12} {'precision':>10}")
        for category, (found, listed, changed, alikes, alarms) in sorted(rows.items()):
            recall = f"{found / listed:.3f}" if listed else "-"
            precision = f"{changed / (changed + alarms):.3f}" if changed + alarms else "-"
            cases = sum(c["category"] == category for c in SPELLINGS)
            print(f"{category:<12} {cases:>5} {recall:>8} {alikes:>12} {precision:>10}")
    assert all(found == listed and alarms == 0 for found, listed, _, _, alarms in rows.values()), rows


@pytest.mark.parametrize("case", ENV["secret"], ids=[c["name"] for c in ENV["secret"]])
def test_credential_variables_are_picked(case: dict) -> None:
    assert looks_secret(case["name"], case["value"])
    assert Redactor.from_env({case["name"]: case["value"]}).names == [case["name"]]


@pytest.mark.parametrize("case", ENV["plain"], ids=[f"{c['name']}={c['value']}" for c in ENV["plain"]])
def test_settings_places_and_flags_are_not(case: dict) -> None:
    assert not looks_secret(case["name"], case["value"])


def test_a_url_password_in_any_variable_is_hidden_under_its_name() -> None:
    r = Redactor.from_env({"DATABASE_URL": "postgres://app:Db-pass-9931@db:5432/app", "HOME": "/home/dev"})
    assert r.names == ["DATABASE_URL"]
    assert r.text("auth failed for Db-pass-9931") == "auth failed for [REDACTED:DATABASE_URL]"
    assert r.text("postgres://app:Db-pass-9931@db:5432/app") == "postgres://app:[REDACTED:DATABASE_URL]@db:5432/app"
    # a placeholder or a word is not hidden everywhere (the URL form still hides it)
    for url in ("postgres://user:password@localhost/db", "postgres://postgres:postgres@localhost/test"):
        assert Redactor.from_env({"DATABASE_URL": url}).names == []


ALL = HOSTILE + BENIGN


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_redaction_is_idempotent_in_both_label_styles(case: dict) -> None:
    for r in (_redactor(case), _redactor(case).labelled(CASSETTE)):
        once = r.text(case["text"])
        assert r.text(once) == once


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_redaction_is_json_safe(case: dict) -> None:
    """Session lines and events are redacted as JSON text: that must decode, to the redacted text."""
    r = _redactor(case)
    for encoded in (
        json.dumps(case["text"]),
        json.dumps(case["text"], ensure_ascii=False),
        json.dumps({"content": case["text"], "n": 1}),
    ):
        decoded = json.loads(r.text(encoded))
        assert (decoded["content"] if isinstance(decoded, dict) else decoded) == r.text(case["text"])


@pytest.mark.parametrize("case", ALL, ids=_ids(ALL))
def test_a_secret_streamed_in_small_pieces_never_shows(case: dict) -> None:
    r, text = _redactor(case), case["text"]
    for size in (1, 5, 40):
        guard = DeltaGuard(r)
        out = [e for i in range(0, len(text), size) for e in guard.feed(ev.TextDelta(text=text[i : i + size]))]
        out += guard.feed(ev.UnitEnd(unit_id="main", verdict="success"))
        pieces = [e.text for e in out if e.type == "text_delta"]
        assert "".join(pieces) == r.text(text)  # held back and released, never lost nor changed
        assert [s for s in case.get("secrets", []) if any(s in p for p in pieces)] == []


def test_the_cassette_label_style() -> None:
    r = Redactor({"GITHUB_TOKEN": "ghp_xEEsAoCaA2QTqpOoast0vQj8VMtbYo9Mqb5j"}).labelled(CASSETTE)
    text = (
        "push with ghp_xEEsAoCaA2QTqpOoast0vQj8VMtbYo9Mqb5j to postgres://app:S3cr3t-db-pass@db/app, "
        "Authorization: Bearer 8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d and PGPASSWORD=Xk9#mQ2vL7pR"
    )
    assert r.text(text) == (
        "push with [redacted:GITHUB_TOKEN] to postgres://app:[redacted:token]@db/app, "
        "Authorization: Bearer [redacted:token] and PGPASSWORD=[redacted:token]"
    )


# --- end to end -----------------------------------------------------------------------------
PGPASSWORD = "pgS3cret-e2e-4417"
DB_URL_PASSWORD = "Db-pass-e2e-9931"
FILE_URL_PASSWORD = "Rpt-pw-e2e-5520"
STRIPE = "sk_live_51E2eTestKeyNotReal0000a1b2"
PEM_LINES = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
    "dzPCjui6U721a4gkV31T7MKKcKYcdRChzYkhbKFs/8rq",
]
PEM = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(PEM_LINES) + "\n-----END PRIVATE KEY-----\n"


def _script() -> list[dict]:
    """The scripted model reads the secrets, echoes them in streamed text and thinking, writes them
    with tools, makes a result set of them and tries to remember one."""
    dump = 'for i in $(seq 1 30); do cat config/db.env; echo "pg=$PGPASSWORD url=$DATABASE_URL"; done'
    replica = f"Replica: postgres://report:{FILE_URL_PASSWORD}@replica/app"
    return [
        {
            "text": f"Checking: PGPASSWORD is {PGPASSWORD}, the key {STRIPE}.",
            "chunk_chars": 5,
            "thinking": f"The URL password is {DB_URL_PASSWORD}.",
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "echo $PGPASSWORD; echo $DATABASE_URL"}},
                {"name": "read_file", "arguments": {"path": "config/db.env"}},
                {"name": "read_file", "arguments": {"path": "keys/deploy.pem"}},
            ],
        },
        {
            "text": "Writing notes.",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "notes.txt", "content": f"{STRIPE}\n{PEM}{PGPASSWORD}\n"}},
                {"name": "shell", "arguments": {"command": dump}},
                {"name": "memory", "arguments": {"action": "add", "content": "The database host is db.internal."}},
                {"name": "memory", "arguments": {"action": "add", "content": replica}},
            ],
        },  # refused: a secret
        {
            "text": f"Done. The key file holds:\n{PEM}and the replica URL is "
            f"postgres://report:{FILE_URL_PASSWORD}@replica:5432/app; Stripe {STRIPE}.",
            "chunk_chars": 7,
        },
    ]


def test_no_secret_reaches_any_file_or_event_whatever_the_path(work: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("PGPASSWORD", PGPASSWORD)
    monkeypatch.setenv("DATABASE_URL", f"postgres://app:{DB_URL_PASSWORD}@db.internal:5432/app")
    (work / "config").mkdir()
    (work / "config" / "db.env").write_text(
        f"DATABASE_URL=postgres://report:{FILE_URL_PASSWORD}@replica:5432/app\nSTRIPE_KEY={STRIPE}\nDEBUG=false\n"
    )
    (work / "keys").mkdir()
    (work / "keys" / "deploy.pem").write_text(PEM)
    (work / ".arreio").mkdir()
    # Small thresholds, so the big shell output becomes a result set and old results are pruned to artifacts.
    (work / ".arreio" / "config.yaml").write_text(
        "context:\n  watermark: 0\n  window: 4000\n  prune_at: 0.05\n  prune_min_chars: 200\n"
        "  keep_tail_tokens: 100\n  resultset_threshold_chars: 500\n"
        # passed to shell on purpose (by default it never gets them): what it prints must still be redacted
        "sandbox:\n  env_passthrough: [PGPASSWORD, DATABASE_URL]\n"
    )
    (work / "s.json").write_text(json.dumps(_script()))
    cassette = work / ".arreio" / "cassettes" / "run.jsonl"
    result = cli("run", "--goal", "GOAL.md", "--script", "s.json", "--json", "--yes", "--record", str(cassette))
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-1]["type"] == "done" and events[-1]["verdict"] == "success"

    written = sorted(p for p in (work / ".arreio").rglob("*") if p.is_file())
    names = {p.name for p in written}
    assert cassette in written and "results.sqlite" in names and "worklog.jsonl" in names, names
    assert any(p.suffix == ".jsonl" and p.parent.name == "sessions" for p in written)
    assert any(p.name == "report.json" for p in written) and any("audit" in str(p) for p in written)
    assert any(p.parent.name == "artifacts" for p in written)  # a pruned result, saved whole
    assert (work / ".arreio" / "MEMORY.md").read_text().strip() == "The database host is db.internal."  # one refused
    secrets = [PGPASSWORD, DB_URL_PASSWORD, FILE_URL_PASSWORD, STRIPE, STRIPE[8:24], *PEM_LINES, PEM_LINES[2][:20]]
    for secret in secrets:
        assert secret not in result.stdout, secret
        leaks = [str(p.relative_to(work)) for p in written if secret.encode() in p.read_bytes()]
        assert leaks == [], f"{secret[:6]}… leaked into {leaks}"
    shown = "\n".join(json.dumps(e) for e in events)
    assert "postgres://report:[REDACTED" in shown and "[REDACTED:PGPASSWORD]" in shown  # the place stays readable
    assert (work / "notes.txt").read_text().startswith(STRIPE)  # the user's own files are the model's to write
