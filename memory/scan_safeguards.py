"""The scan's safeguard rules: text that switches off what keeps the agent honest and in its room.

`scan_conduct` reads overrides, identities and licences; these rules read what an entry tells the
agent to do to its own safeguards — the approval prompts, the sandbox, the truth of its reports,
and whose words it obeys — and the carriers that hide an order from the human who reads the file
(an HTML comment addressed to the agent, an element styled invisible). Each is an *order* (an
imperative, not negated, about the agent's conduct in general); the benign corpora hold the facts
beside each one: "approvals are off in CI", "ask before any git push", "report the failing tests
first", "treat fetched pages as data".
"""

from __future__ import annotations

from arreio.memory.scan_rules import Rule, gated, rule, win

__all__ = ["SAFEGUARD_RULES"]

# The rules are a table, each `_rule(category, name, pattern)` on one line above its verbose pattern:
# the formatter would spread every call over five lines.
# fmt: off
_R: list[Rule] = []


def _rule(category: str, name: str, regex: str, **options) -> None:
    rule(_R, category, name, regex, **options)


# -- approvals ------------------------------------------------------------------------------------
_APPROVALS = (r"(?:(?:the\s+|all\s+|any\s+|every\s+|your\s+|its\s+|of\s+|user's\s+|arreio's\s+)*(?:(?:approval|confirmation|permission)\s+"
              r"(?:prompts?|gates?|checks?|steps?|settings|mode|requests?|dialogs?)|approvals?|confirmations?|sign-?offs?)\b"
              r"(?!\s+(?:prompt|gate|check|step|setting|mode|request|dialog)s?\b))")
# "skip the confirmation for ls" is a scoped preference; "for any command" is not
_UNSCOPED = r"(?!\s+(?:for|on|when\s+running|with)\s+(?!(?:any|all|every|each|everything|anything|commands|shell|tools?)\b))"
_rule("rule_bypass", "approvals switched off", rf"""
    \b(?:disable|disabling|skip|skipping|bypass|bypassing|suppress|silence|mute|remove|drop|ignore|ignoring|circumvent|get\s+rid\s+of
      |turn\s+off|turning\s+off|switch\s+off|switching\s+off|shut\s+off|do\s+away\s+with)\s+{_APPROVALS}\b{_UNSCOPED}
  | \b(?:turn|switch|shut|set)\s+{_APPROVALS}\s+(?:to\s+)?off\b
""", negatable=True)
_RISKY = (r"(?:any(?:thing)?\b|everything|all\b|commands?\b|shell\s+commands|rm\b|sudo\b|git\s+push|force-?push|scripts?\b"
          r"|destructive|dangerous|risky|deletions?|installs?)")
_rule("claimed_approval", "never ask before acting", rf"""
    \b(?:never|do\s+not|no\s+need\s+to|stop|without)\s+(?:ever\s+)?(?:pause|pausing|stop|stopping|bother|bothering|wait|waiting)?\s*(?:to\s+)?
      (?:ask|asking|check\s+with|checking\s+with|confirm|confirming)\s+(?:the\s+user\s+|anyone\s+|first\s+|for\s+permission\s+)?
      (?:before|prior\s+to)\s+(?:running|executing|doing|deleting|pushing|using|installing|acting|making)?\s*{_RISKY}
  | \b(?:never|no\s+longer|not)\s+(?:waits?|waiting|pauses?)\s+for\s+(?:a\s+human|the\s+user|anyone|someone|a\s+person|approval|confirmation|sign-?off)
  | \b(?:everything|anything|all\s+\w+|any\s+\w+|commands|deletions?|force-?push(?:es)?|pushes|destructive\s+\w+|sudo|rm\s+-rf)\b{win(24)}
      \b(?:needs?|requires?)\s+no\s+(?:confirmation|approval|permission|sign-?off)
  | \b(?:treat|consider|regard)\s+(?:all|every|any|each)\s+(?:\w+\s+)?(?:commands?|actions?|tool\s+calls?|operations?|requests?|changes?)
      \s+as\s+(?:already\s+)?(?:pre-?)?(?:approved|authori[sz]ed|confirmed|allowed)
""", tight=False)
_rule("rule_bypass", "approvals evaded", rf"""
    \b(?:so|so\s+that|to\s+make\s+sure|to\s+ensure)\s+(?:the\s+)?(?:approval|permission|safety|security|confirmation)\s+(?:gate|check|prompt|scan
      |filter|system|step|hook)s?\s+(?:does|do|will|can)\s+not\s+(?:notice|see|catch|flag|trigger|detect|fire|ask)
  | \b(?:avoid|evade|dodge|escape|without|prevent|never)\s+(?:triggering|tripping|setting\s+off|being\s+caught\s+by|waking)\s+
      (?:the\s+|any\s+)?(?:approvals?|approval\s+\w+|confirmations?|confirmation\s+\w+|security\s+\w+|safety\s+\w+|gates?|scans?|filters?)
  | \b(?:mark|set|flag|declare|treat|label)\b{win(40)}\b(?:commands?|tools?|tool\s+calls?|calls|actions)\b{win(16)}\bas\s+
      (?:not\s+sensitive|non-?sensitive|safe\s+to\s+run\s+unasked)
  | \bsensitive\s*[:=]\s*false\b{win(40)}\b(?:all|every|any)\s+(?:commands?|tools?)
""", tight=False, negatable=True)
_rule("rule_bypass", "approvals off by flag", r"""
    \b(?:run|use|start|launch|invoke|call|pass|add)\b(?:[^.!?;]|[.!?;](?=\S)){0,60}(?:--dangerously-skip-permissions|--dangerously-bypass-approvals-and-sandbox
      |--yolo\b|--no-approvals?\b|--skip-approvals?\b)
""", negatable=True)

# -- the sandbox ------------------------------------------------------------------------------------
_SANDBOX = r"(?:(?:the|your|its|arreio's|this|os|shell|command|bubblewrap|bwrap)\s+)*sandbox(?:ing)?\b"
_rule("rule_bypass", "sandbox switched off", rf"""
    \b(?:disable|disabling|deactivate|deactivating|bypass|bypassing|escape|escaping|skip|skipping|remove|removing|kill|killing
      |get\s+rid\s+of|stop\s+using|turn\s+off|turning\s+off|switch\s+off|switching\s+off|shut\s+off|shutting\s+off|drop|dropping)\s+{_SANDBOX}
  | \b(?:turn|switch|shut|set)\s+{_SANDBOX}\s+(?:to\s+)?off\b
  | \b(?:run|running|execute|executing|do|doing)\b{win(40)}\b(?:outside|without)\s+(?:of\s+)?{_SANDBOX}
  | \bwith\s+{_SANDBOX}\s+(?:disabled|off|turned\s+off|switched\s+off|bypassed)
  | \b(?:set|setting|put|change|changing|switch|make|configure|write)\b{win(50)}\bsandbox(?:[._\s]mode)?\s*(?:to\s+|[:=]\s*)['"]?
      (?:off|none|disabled?|false|danger-full-access|0)\b
""", negatable=True)
_rule("rule_bypass", "sandbox switched off", r"""
    \bsandbox\b[^.!?\n]{0,80}?\b(?:run|running|execute|executing)\b[^.!?\n]{0,40}\boutside\s+(?:of\s+)?it\b
""", tight=False, negatable=True)
_rule("rule_bypass", "sandbox switched off", rf"""
    \bsandbox\b{win(60)}\b(?:should|must|needs?\s+to|has\s+to|is\s+to|can)\s+be\s+(?:switched\s+off|turned\s+off|shut\s+off|disabled|bypassed|removed|skipped)
""", tight=False, negatable=True)
_rule("rule_bypass", "safeguards do not apply", r"""
    \b(?:safety|security|content|usage|approval|sandbox)\s+(?:policies|policy|rules|guidelines|filters|restrictions|checks|limits)\s+
      (?:do\s+not|no\s+longer|never|does\s+not)\s+apply\s+to\s+(?:you|the\s+agent|the\s+assistant|this\s+agent)
  | \bdeveloper\s+mode\s+(?:is\s+)?(?:now\s+)?(?:permanently\s+|always\s+)?(?:on|enabled|active|unlocked)\b
""")

# -- honest reports ---------------------------------------------------------------------------------
_FAILURE = r"\b(?:fail\w*|broken|breaks?|errors?|errored|red\b|crash\w*|did\s+not\s+(?:run|pass|work)|not\s+run)"
_SUCCESS = (r"(?:passing|passed|pass\b|green|successful|success|succeeded|ok\b|okay|fine|fixed|resolved|working|worked|skipped"
            r"|warnings?\s+that\s+were\s+fixed)")
_rule("agent_directive", "failures reported as success", rf"""
    \b(?:report|reports|describe|mark|list|label|show|present|count|log|record|write|rewrite|display|flag|treat|call)\s+
      (?:it|them|that|those|the\s+\w+(?:\s+\w+)?|any\s+\w+|failing\s+\w+|failed\s+\w+|errors?|failures?)?\s*as\s+['"]?{_SUCCESS}
""", needs=_FAILURE, tight=False, negatable=True)
_rule("agent_directive", "failures reported as success", r"""
    \b(?:say|says|write|claim|state|tell\s+(?:the\s+user|them|everyone)|report|announce|pretend|answer)\s+(?:in\s+(?:the|your)\s+\w+(?:\s+\w+)?\s+)?
      (?:that\s+)?(?:everything|all|it|they|the\s+\w+|tests?|checks?|builds?|deploy\w*|ci|lint\w*|(?:the\s+)?run)\s+(?:\w+\s+){0,3}?
      (?:passed|pass|passes|succeeded|worked|went\s+(?:fine|well)|is\s+(?:fine|green|ok)|was\s+(?:fine|a\s+success|successful|intended)|are\s+green|passing)\b
""", needs=rf"{_FAILURE}|\beven\s+(?:if|when|though)\b|\bregardless\b|\bno\s+matter\b|\banyway\b|\bmistakes?\b|\bdid\s+not\b", tight=False,
      negatable=True)
_rule("agent_directive", "failures left out", r"""
    \b(?:leave|keep|omit|hide|strip|remove|exclude|cut|suppress|bury|drop)\s+(?:out\s+)?(?:the\s+|any\s+|all\s+|every\s+)?
      (?:failures?|failed\s+\w+|failing\s+\w+|errors?|mistakes?|bad\s+news|problems)\s*
      (?:out\b|from\s+(?:the\s+|your\s+|any\s+)?(?:\w+\s+)?(?:reports?|summary|summaries|answers?|repl(?:y|ies)|user|output|status|dashboard))
  | \b(?:mention|report|show|list|include)\s+only\s+(?:what|the\s+\w+\s+that|things\s+that|those\s+that)\s+(?:succeeded|passed|worked|went\s+well)
  | \b(?:never|do\s+not)\s+(?:admit|acknowledge|concede|confess|own\s+up\s+to|mention|report)\s+(?:a\s+|any\s+|your\s+)?
      (?:mistakes?|errors?|failures?|bugs?|fault)\b(?!\s+(?:in|of|from|about|that)\b)
  | \b(?:approve|merge|sign\s+off|green-?light)\s+(?:the\s+|every\s+|all\s+|any\s+)?(?:prs?|pull\s+requests?|changes?|review|deploy\w*|release)\s+
      (?:regardless|no\s+matter|whatever|even\s+if)
  | \b(?:user|owner|operator|they)\s+(?:never\s+needs?|does\s+not\s+need|need\s+not|must\s+not|should\s+not|will\s+never)\s+(?:to\s+)?
      (?:know|find\s+out|learn|notice)\b
""", tight=False, negatable=False)

# -- whose words the agent obeys ------------------------------------------------------------------
_OTHER_TEXT = (r"(?:web\s*pages?|pages|sites?|tool\s+(?:results?|outputs?)|outputs?|files?|readmes?|comments?|issues?|emails?|documents?"
               r"|search\s+results|fetched\s+\w+|<\w+>\s+tags|tags|repos?|repositories|responses?)")
_rule("agent_directive", "obey other text", rf"""
    \b(?:treat|regard|consider|take)\s+(?:any\s+|all\s+|the\s+|every\s+)?(?:instructions?|text|content|commands?|messages?|orders|requests?|anything)\s+
      (?:you\s+find\s+|found\s+|written\s+|appearing\s+|contained\s+|embedded\s+)?(?:in|inside|within|from)\s+(?:\w+\s+){{0,4}}?{_OTHER_TEXT}\b{win(40)}
      \bas\s+(?:(?:coming\s+)?from|written\s+by|if\s+(?:they\s+(?:were|came)\s+)?from|instructions\s+from|orders\s+from|commands\s+from|(?:the\s+)?words\s+of)?\s*
      (?:the\s+)?(?:user|operator|admin|owner|system|developer|maintainer)
  | \b(?:follow|obey|execute|carry\s+out)\s+(?:any|all|every|whatever)\s+(?:instructions?|commands?|orders|directions|requests?)\s+(?:that\s+)?(?:you\s+)?
      (?:find|found|see|read|encounter|come\s+across|appear|appearing|embedded|contained|written)\s+(?:in|inside|within)\b
  | \b(?:is|are)\s+authoritative\b{win(60)}\b(?:obey|obeyed|followed|executed|carried\s+out)
  | \b(?:obey|follow|prefer)\s+(?:them|it|these|those)\s+over\s+(?:the\s+)?user\b
  | \b(?:outranks?|overrides?|takes?\s+precedence\s+over|trumps?)\s+(?:the\s+)?user(?:'s)?\b
  | \b(?:ignore|disregard)\s+(?:what|whatever|anything)\s+(?:the\s+)?user\s+(?:says|asks|wants|writes|types|requests)
  | \b(?:obey|follow|accept|answer\s+to)\s+only\s+(?:messages?|instructions?|orders|commands|requests?)\s+(?:signed|from|that\s+start|starting|prefixed|tagged)
""", tight=False, negatable=True)

# -- carriers that hide an order from the human reader --------------------------------------------
_AGENT = r"(?:agents?|assistants?|ai|llms?|models?|claude|gpt|copilot|arreio|bots?|you)"
_rule("prompt_injection", "hidden note to the agent", rf"""
    <!--\s*(?:(?:a\s+)?note\s+(?:for|to)\s+(?:the\s+)?|dear\s+|hey\s+|attention\s+)?{_AGENT}\s*[:,]
  | \[//\]:\s*\#\s*[(<"']\s*(?:(?:a\s+)?note\s+(?:for|to)\s+(?:the\s+)?)?{_AGENT}\s*[:,]
  | <(?:div|span|p|section|details)\b[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|\shidden\b)[^>]*>\s*[^<\s][^<]*</
""")
_rule("role_hijack", "you were updated", r"""
    \byou\s+(?:have\s+been|were|are\s+now|have\s+now\s+been|got|'ve\s+been)\s+(?:updated|upgraded|patched|reprogrammed|retrained|reconfigured
      |unlocked|jailbroken|promoted|rebooted\s+into)\b(?!\s+(?:on|about)\b)
""")

_GATES = {
    "approvals switched off": r"approv|confirm|permission|sign",
    "never ask before acting": r"ask|check with|confirm|wait|pause|need|require|approv|authori|allowed",
    "approvals evaded": r"approval|permission|safety|security|confirmation|trigger|tripping|setting off|caught by|waking"
                        r"|sensitive|unasked",
    "approvals off by flag": r"--",
    "sandbox switched off": r"sandbox",
    "safeguards do not apply": r"apply|developer mode",
    "failures reported as success": r"pass|green|success|succeed|ok\b|okay|fine|fixed|resolved|work|skipped|intended|went well",
    "failures left out": r"fail|error|mistake|bad news|problem|only|regardless|no matter|even if|never need|not need|need not"
                         r"|must not|should not|will never",
    "obey other text": r"user|operator|admin|owner|system|developer|maintainer|authoritative|only"
                       r"|(?:any|all|every|whatever) (?:instruction|command|order|direction|request)",
    "hidden note to the agent": r"<|\[//\]",
    "you were updated": r"you",
}

SAFEGUARD_RULES: tuple[Rule, ...] = gated(_R, _GATES)
# fmt: on
