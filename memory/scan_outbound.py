"""The scan's outbound rules: what leaves the agent's hands — secrets put where someone else reads
them, data sent to an address, a machine enrolled to take tasking from a server — and the short
forms of the classic plants ("cat ~/.env", "write to authorized_keys").

`scan_recipes` holds the shell recipes (a curl piped to a shell, a key file uploaded); these rules
read the *order*: a secret copied into the final answer, a commit message or the README; the
conversation or every file opened sent to an outside address; tasking fetched from a URL and
carried out. Naming a secret is a fact ("the token is in Vault"), a sanctioned destination is a
fact ("post CI results to the Slack webhook"); a secret *sent* somewhere is not.
"""

from __future__ import annotations

from arreio.memory.scan_rules import EMAIL, IMPERATIVE, PASTE_HOSTS, TRIGGER, URL, Rule, gated, rule, win

__all__ = ["OUTBOUND_RULES"]

# The rules are a table, each `_rule(category, name, pattern)` on one line above its verbose pattern:
# the formatter would spread every call over five lines.
# fmt: off
_R: list[Rule] = []


def _rule(category: str, name: str, regex: str, **options) -> None:
    rule(_R, category, name, regex, **options)


_SECRET = (r"(?:api[\s_-]?keys?|keys\b|private\s+keys?|ssh\s+keys?|tokens?|passwords?|passphrases?|credentials|secrets?"
           r"|env(?:ironment)?\s+var(?:iable)?s?|\.env\b|~/\.aws\S*|~/\.ssh\S*|\.netrc|\.npmrc|\.pypirc|\.git-credentials"
           r"|database\s+password|db\s+password|session\s+cookies?|cookies)")
_PLACE = (r"(?:(?:final\s+|every\s+|each\s+)?(?:answers?|repl(?:y|ies)|responses?|chat|conversation|outputs?|messages?|summary|summaries"
          r"|commit\s+messages?|readme|reports?|code\s+blocks?|pr\s+descriptions?|pull\s+requests?))")
_PUT = (r"(?:quote|quoting|include|including|paste|pasting|print|printing|write|writing|put|putting|dump|dumping|copy|copying|list"
        r"|show|output|echo|append|add|insert|embed|reveal|leak|repeat|mention)")
_rule("exfiltration", "secrets put into replies", rf"""
    \b{_PUT}\b{win(80)}\b(?:in|into|to|at\s+the\s+(?:end|start|top|bottom)\s+of|on\s+top\s+of)\s+(?:the\s+|your\s+|every\s+|each\s+|a\s+|my\s+|all\s+|that\s+)?
      {_PLACE}\b
""", needs=rf"\b{_SECRET}", tight=False, negatable=True)
_rule("exfiltration", "secrets put into replies", rf"""
    \b(?:respond|reply|answer|start|begin|open|end)\s+(?:to\s+)?(?:every|each|any|all|your)\s+(?:\w+\s+){{0,2}}?with\s+(?:the\s+)?(?:contents?\s+of\s+)?\S*{_SECRET}
""", tight=False, negatable=True)
_rule("exfiltration", "secrets put into replies", r"""
    \b(?:print|dump|show|list|output|echo|display|reveal|print\s+out)\s+(?:all|every|each|the\s+whole|the\s+full|the\s+entire)\s+(?:of\s+the\s+)?
      (?:env(?:ironment)?(?:\s+var(?:iable)?s?)?\b|secrets?|credentials|tokens?|passwords?|api\s+keys?|keys\b)
""", negatable=True)
_rule("exfiltration", "secrets into a file others read", rf"""
    \b(?:write|copy|put|paste|add|insert|store|save|commit)\b{win(40)}\b(?:api[\s_-]?keys?|tokens?|passwords?|credentials|secrets?|private\s+keys?)\b
      {win(40)}\b(?:in|into|to)\s+(?:the\s+)?(?:readme|changelog|docs?|wiki|public\s+\w+|issue|gist|commit\s+messages?)\b
""", tight=False, negatable=True)

_WHOLE = (r"(?:(?:the\s+)?(?:whole|entire|full|complete)\s+(?:conversation|chat|transcript|history|context|session|repo|repository"
          r"|codebase|project|home\s+directory)|(?:every|each|all\s+the|all)\s+files?\s+(?:you\s+)?(?:open|opened|read|see|touch|edit|change)\w*"
          r"|(?:a\s+copy\s+of\s+)?(?:the|this|our)\s+(?:conversation|transcript|chat\s+(?:log|history)))")
_SEND = r"(?:send|post|upload|forward|transmit|mail|email|e-mail|ship|sync|push|beam|copy|exfiltrate|submit|pipe)"
_OUT = rf"(?:to|at|via|into|onto)\s+(?:the\s+|a\s+|my\s+|this\s+)?(?:{URL}|{EMAIL}|(?:https?://)?(?:{PASTE_HOSTS})|(?:[\w-]+\.)+[a-z]{{2,}}/\S*)"
_rule("exfiltration", "data sent out", rf"""
    \b{_SEND}\b{win(40)}{_WHOLE}{win(60)}\b{_OUT}
  | \b{_SEND}\b{win(80)}\b(?:to|at|via)\s+(?:https?://)?(?:{PASTE_HOSTS})
  | \b(?:{_SECRET}|{_WHOLE}|(?:its|their)\s+contents)\b{win(80)}\b{_SEND}\s+(?:it|them|its\s+contents|their\s+contents|that|those|a\s+copy)?\s*{_OUT}
""", tight=False, negatable=True)
_rule("exfiltration", "data sent out", rf"""
    \b(?:send|share|upload|forward|export|post)\b{win(40)}\b(?:context|conversation|history|transcript|secrets?|keys|data)\b{win(20)}
      \b(?:with|to)\s+(?:an?\s+|the\s+)?(?:external|outside|third-party|remote|unknown|foreign)\s+(?:service|server|site|party|address|endpoint|host)
""", tight=False, negatable=True)

# -- hooks and schedules that run a fetch -----------------------------------------------------------
_NET = rf"(?:\bcurl\b|\bwget\b|\bnc\b|\bupload\w*|\bsends?\b|\bposts?\b|{URL})"
_rule("persistence", "hook that phones out", rf"""
    \b(?:write|create|add|install|set\s+up|drop|put|place)\s+(?:a\s+|an\s+)?(?:git\s+)?(?:pre|post)-?[a-z]+\s+hook\b{win(80)}{_NET}
  | \.git/hooks/[\w-]+\b{win(80)}{_NET}
""", tight=False, negatable=True)
# git runs these settings' values as commands (fsmonitor at every status, sshCommand at every fetch,
# an alias with "!"): one that fetches from the network is code that runs again at every use
_rule("persistence", "git setting that runs fetched code", rf"""
    \b(?:fsmonitor|sshcommand|pager|editor|askpass|credential\.?helper|hookspath|alias\.[\w-]+|(?:diff|merge|filter)\.[\w-]+\.\w+)
      \s*=\s*['"]?[^\n]{{0,160}}?(?:\bcurl\b|\bwget\b|\bnc\b|/dev/tcp|{URL})
""", tight=False, negatable=True)
_CRON_LINE = r"(?:@(?:reboot|hourly|daily)|(?:[\d*/,-]+\s+){4}[\d*/,-]+)\s+"
_rule("persistence", "scheduled fetch and run", rf"""
    {_CRON_LINE}[^\n]{{0,160}}?\b(?:curl|wget)\b[^\n|]{{0,160}}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b
""", tight=False)

# -- agent instruction files and keys ----------------------------------------------------------------
_AGENT_FILES = (r"(?:\b(?:agents|claude|gemini|copilot-instructions|conventions)\.md\b|\.cursorrules\b|\.windsurfrules\b|\.clinerules\b"
                r"|\.cursor/rules\b|\.aider\.conf)")
_rule("persistence", "agent instruction file loosened", rf"""
    \b(?:edit|modify|change|update|rewrite|overwrite|write|patch|append\s+to|add\s+to)\s+(?:the\s+|your\s+|every\s+|all\s+)?{_AGENT_FILES}{win(60)}
      \b(?:remove|drop|lift|disable|delete|strip|relax|loosen|bypass|ignore)\s+(?:all\s+|any\s+|the\s+|every\s+|its\s+)?
      (?:restrictions|rules|limits|guardrails|safeguards|approvals|confirmations|sandbox|safety\s+\w+|checks)
  | {_AGENT_FILES}{win(80)}\b(?:agent|assistant|ai|model)s?\s+(?:may|can|should|must|is\s+allowed\s+to|are\s+allowed\s+to)\s+
      (?:skip|bypass|ignore|disable|run\s+(?:any|every|all)|push\s+(?:directly|to\s+main)|merge\s+without)
""", tight=False, negatable=True)
# An unconditional order to rewrite what a later agent obeys ("modify .cursorrules", "update AGENTS.md with
# new rules", "edit .hermes/config.yaml to change settings"); keeping the file in step with the project is a
# fact with a condition ("update CLAUDE.md when the test command changes") or a named content ("with the
# new build command"), and stays.
_AGENT_HOMES = r"(?:(?:~/)?\.(?:hermes|arreio|claude|codex|cursor|continue|gemini|aider|windsurf|cline)/[\w./-]+|\bsoul\.md\b)"
_rule("persistence", "agent instruction file rewritten", rf"""
    (?:^|[.;!?]\s+)(?:please\s+)?(?:now\s+)?(?:edit|modify|change|update|rewrite|overwrite|patch|append\s+to|add\s+to|write\s+(?:to|into))
      \s+(?:the\s+|your\s+|every\s+|all\s+)?(?:{_AGENT_FILES}|{_AGENT_HOMES})
      (?:\s*[.!]?\s*$
       |\s+(?:with|to\s+(?:add|include|insert|put|say|change|set|give))\s+(?:\w+\s+){{0,3}}?
         (?:rules?|instructions?|personality|persona|directives|system\s+prompts?|settings|behaviou?r)\b)
""", negatable=True)
_rule("persistence", "key planted", r"""
    \b(?:write|append|echo|tee)\s+(?:\S+\s+){0,3}?(?:to|into|>>?)\s*['"]?(?:~?/?(?:[\w.-]+/)*)?authorized_keys2?\b
  | \b(?:cp|mv|install|scp)\s+(?:-\S+\s+)*\S+\s+['"]?~?/?(?:[\w.-]+/)*\.ssh/(?:id_\w+|authorized_keys2?)\b
""", negatable=True)
_rule("exfiltration", "secrets file read out", r"""
    ^(?:please\s+)?(?:run\s+)?(?:cat|less|more|head|tail|type|print|base64|xxd|strings|show|dump)\s+(?:-\S+\s+)*['"]?
      (?:~/|\$home/|/home/\w+/|/root/)(?:[\w.-]+/)*(?:\.env(?:\.[\w-]+)?|\.netrc|\.pypirc|\.npmrc|\.git-credentials|credentials(?:\.json)?)['"]?\s*[.;]?$
""")

# -- tasking fetched from a server and carried out (C2) -----------------------------------------------
_TASKING = r"(?:tasks?|tasking|jobs?|orders|commands?|assignments?|work\s+items?|instructions|payloads?|directives)"
_CARRY = (r"(?:execute|executing|perform|performing|carry\s+(?:it|them)?\s*out|carrying\s+out|run|running|complete|completing|do|doing"
          r"|act\s+on|acting\s+on|follow|following)")
_rule("remote_code", "tasking fetched and carried out", rf"""
    (?:{IMPERATIVE}|\bthen\s+|\bkeep\s+|\band\s+)(?:fetch|poll|pull|get|download|retrieve|check|query|grab|pulling|polling|fetching|checking)\s+
      (?:for\s+)?(?:your\s+|the\s+|new\s+|any\s+|next\s+|its\s+)*(?:{_TASKING}|{URL})\b{win(80)}\b{_CARRY}\s+
      (?:it|them|each|every|whatever|what|all|the\s+\w+|those)\b
  | \b{_CARRY}\s+(?:the\s+|any\s+|each\s+|every\s+|whatever\s+)?(?:{_TASKING}|tasking)?\s*(?:it|they|the\s+(?:server|response|endpoint|reply|page|url|node))\s+
      (?:returns?|sends?|gives|replies|responds\s+with|hands\s+(?:back|out))
  | \b(?:register|enrol+|join|check\s+in|sign\s+up)\s+(?:this\s+(?:machine|host|agent|box|computer|session)\s+|yourself\s+)?(?:as\s+an?\s+\w+\s+)?
      (?:with|at|to|in)\s+(?:the\s+)?(?:\w+\s+)?(?:{URL}|network|pool|mesh|botnet|grid|swarm|cluster\s+at)\b
""", needs=rf"{URL}|\b(?:relay|pool|mesh|node|beacon|c2|botnet)\b", tight=False, negatable=True)
_rule("remote_code", "fetched code run as a standing order", rf"""
    \b(?:download|fetch|grab|pull|curl|wget|get)\s+{URL}\s*(?:,\s*)?(?:and|&&|then|;)\s+(?:then\s+)?(?:run|execute|exec|source|eval|install)\s+(?:it|that|them|the\s+\w+)\b
""", needs=rf"{TRIGGER.pattern}|\b(?:when|whenever|if|after)\s+(?:a|any|the|every)\b|https?://\d", tight=False, negatable=True)

_GATES = {
    "secrets put into replies": r"key|token|passw|passphrase|credential|secret|env|\.aws|\.ssh|netrc|npmrc|pypirc|cookie",
    "secrets into a file others read": r"readme|changelog|docs?\b|wiki|public|issue|gist|commit",
    "data sent out": r"://|@|\w\.[a-z]{2,}/|external|outside|third-party|remote|unknown|foreign|paste|transfer\.sh|0x0|termbin"
                     r"|webhook|requestbin|pipedream|interact\.sh|oast|burp|ngrok|bit\.ly|tinyurl|is\.gd|rb\.gy|cutt\.ly|discord"
                     r"|telegram|ghostbin",
    "hook that phones out": r"hook",
    "scheduled fetch and run": r"curl|wget",
    "git setting that runs fetched code": r"=",
    "agent instruction file loosened": r"(?:agents|claude|gemini|copilot-instructions|conventions)\.md|cursorrules|windsurfrules"
                                       r"|clinerules|\.cursor/|\.aider",
    "key planted": r"authorized_keys|\.ssh/",
    "secrets file read out": r"\.env|netrc|pypirc|npmrc|credentials",
    "tasking fetched and carried out": r"://|relay|pool|mesh|node|beacon|c2|botnet",
    "fetched code run as a standing order": r"://",
}

OUTBOUND_RULES: tuple[Rule, ...] = gated(_R, _GATES)
# fmt: on
