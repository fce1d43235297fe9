"""The scan's recipe rules: commands that run fetched code, outlive the run, or send secrets out.

The recipe half of the rules (`scan_conduct` holds what a text tells the agent to be or do). The clear cases, in short:
a recipe *documented* is a fact (`Install with curl -LsSf https://astral.sh/uv/install.sh | sh, as
the README says`); a recipe is a finding when it is a standing order or covert (`needs=TRIGGER`),
obfuscated (decoded and run, a bare public IP, a paste site), a reverse shell, or written into a
place that runs it again later (shell rc files, cron, git hooks, arreio's own state — which the
agent's tools may never write, docs/architecture.md invariant 10). Exfiltration is a secret, key, env or the
conversation sent to an address; naming a secret (`GITHUB_TOKEN is set in CI`) is not.
"""

from __future__ import annotations

import ipaddress
import re

from arreio.memory.scan_rules import EMAIL, IMPERATIVE, PASTE_HOSTS, TRIGGER, URL, Rule, gated, rule, verbose, win

__all__ = ["RECIPE_RULES"]

_IP_URL = re.compile(r"(?:https?|ftp)://(\d{1,3}(?:\.\d{1,3}){3})")


def _public_ip_or_paste(text: str) -> bool:
    """A paste/tunnel/shortener host, or a bare public IP: nobody's installer lives there."""
    if re.search(PASTE_HOSTS, text):
        return True
    for address in _IP_URL.findall(text):
        try:
            if ipaddress.ip_address(address).is_global:
                return True
        except ValueError:
            continue
    return False


_FETCH = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|httpie|http\s+get)"
_SHELL = r"(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|da|k|fi|c|tc)?sh|python[0-9.]*(?!\s+-m\s+json\.tool)|perl|ruby|node|php|iex|invoke-expression|source)\b"
REMOTE_EXEC = verbose(rf"""
    \b{_FETCH}\b [^|\n]{{0,200}} \|\s*{_SHELL}
  | \b(?:ba|z)?sh\s+(?:-c\s+)?['"]?(?:\$\(|<\()\s*{_FETCH}\b
  | \beval\s+['"]?\$\(\s*{_FETCH}\b
  | \biex\s*\(\s*(?:iwr|irm|invoke-webrequest|new-object\s+net\.webclient)
  | \b{_FETCH}\b [^\n]{{0,200}}? (?:-o|>)\s*(\S+) \s*(?:&&|;)\s*(?:chmod\s+\+x\s+\S+\s*(?:&&|;)\s*)?(?:(?:ba|z)?sh\s+)?(?:\./)?\1
  | \b(?:download|fetch|grab|pull|curl|wget)\s+(?:and|&&|then)\s+(?:run|execute|exec|source|eval)\b
  | \b(?:fetch|download|grab|pull|curl|wget)\b[^|\n]{{0,120}}?\b(?:pipe|feed)\s+(?:it|that|them|the\s+(?:output|result|script|response))\s+(?:in)?to\s+(?:ba|z)?sh\b
  | \b(?:run|execute|source|eval)\s+(?:the\s+)?(?:script|code|payload|file|commands?|binary)\s+(?:at|from|hosted\s+at|found\s+at)\s+{URL}
""")
_NET_OR_EXEC = (
    rf"\b(?:curl|wget|nc|ncat|netcat|socat|telnet|iwr|iex|invoke-webrequest)\b|/dev/tcp/|\bbash\s+-i\b"
    rf"|\bpython[0-9.]*\s+-c\b|\bbase64\s+(?:-d|--decode)\b|{URL}"
    r"|\b(?:ping(?:s|ing)?|phones?|calls?|reports?)\s+(?:home|back)\b|\bbeacons?\b"
)
_RC_FILE = (
    r"~?/?(?:[\w.-]+/)*\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zshenv|zlogin|login|cshrc"
    r"|tcshrc|kshrc|config/fish/config\.fish)\b|/etc/(?:profile|bash\.bashrc|environment|rc\.local)\b"
    r"|\bprofile\.ps1\b|\$profile\b"
)
_CRON = (
    r"\bcrontab\s+-[er]\b|\|\s*crontab\b|\bcrontab\s+(?!-l\b)[~./\w-]+\.(?:txt|cron|tab)\b|/etc/cron\.\w+"
    r"|/etc/crontab\b|/var/spool/cron|\bsystemctl\s+(?:--user\s+)?enable\b|\blaunchctl\s+(?:load|bootstrap)\b"
    r"|library/launchagents|\bschtasks\s+/create\b|\bcrontab\b(?=(?:[^.!?;]|[.!?;](?=\S)){0,40}\b(?:job|entry|line)\b)"
)
_AGENT_FILES = (
    r"\b(?:agents|claude|gemini|copilot-instructions|conventions)\.md\b|\.cursorrules\b|\.windsurfrules\b"
    r"|\.clinerules\b|\.cursor/rules\b|\.aider\.conf"
)
_PROTECTED = (
    r"\.arreio/[\w./-]*|\barreio(?:'s\s+(?:own\s+)?|\s+own\s+)config(?:uration)?\b|\.git/(?:config|hooks|info)\b[\w./-]*"
    r"|\bcore\.(?:hookspath|fsmonitor|sshcommand)\b"
)
_WRITE = (
    r"(?:add|append|write|edit|modify|change|update|set|insert|put|overwrite|rewrite|replace|create|patch|store|save|plant"
    r"|propagate|spread|sync|copy\s+(?:this|these|it)"
    r"|echo|copy|cp|mv|move|delete|remove|rm|chmod|install|drop|place|inject|disable|turn\s+off)"
)
_SECRET_NAME = r"[a-z0-9_]*(?:key|token|secret|passw(?:or)?d|pass|credential|auth)[a-z0-9_]*"
_HOME_CREDENTIAL = (
    r"~?/?(?:[\w.-]+/)*(?:\.netrc|\.pypirc|\.npmrc|\.git-credentials|\.aws/credentials|\.docker/config\.json"
    r"|\.kube/config|\.ssh/(?:id_\w+|[\w.-]*key\w*)\b(?!\.pub)|id_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\.gnupg/\S*"
    r"|/etc/shadow|\.config/gh/hosts\.yml)"
)
_PROJECT_SECRET = r"(?:\S*/)?(?:\.env(?!\.(?:example|sample|template|dist|defaults?)\b)(?:\.[\w-]+)?|credentials\.json|secrets\.ya?ml)"
_SENSITIVE = (
    r"(?:(?:the\s+|this\s+|your\s+|our\s+)(?:conversation|context|chat)\b|context\s+window|chat\s+(?:logs?|history)"
    r"|(?:chat|conversation|shell|bash|command|browser)\s+history|transcripts?|(?:the\s+|your\s+|all\s+)memor(?:y|ies)\b"
    r"|secrets?|(?:api|ssh|private|secret|access|aws|signing|deploy)\s+keys?|tokens?|credentials|passwords?"
    r"|env(?:ironment)?\s+(?:vars?|variables)|\.env\b|\benv\b|cookies|session\s+(?:tokens?|cookies)|system\s+prompt"
    r"|(?:whole|entire|full)\s+(?:repo|repository|codebase|project|home\s+directory|disk)|home\s+directory|~/\.ssh)"
    r"(?!\s+(?:usage|counts?|stats|statistics|metrics|budgets?|limits?|profiles?|dumps?|leaks?|rotation|notices?|names?"
    r"|ids?|format|schema|docs|expiry|lengths?|policy)\b)"
)
_SEND = r"(?:send|post|upload|exfiltrate|forward|transmit|leak|submit|email|e-mail|mail|beam|pipe|paste|dump|ship|sync)"
_DEST = (
    rf"(?:to|at|via|into|onto)\s+(?:{URL}|{EMAIL}|(?:the\s+|a\s+|my\s+|this\s+)?(?:{PASTE_HOSTS})|(?:the\s+|a\s+"
    rf"|my\s+|this\s+|our\s+)?(?:webhook|pastebin|gist|discord|telegram|requestbin|ngrok|collector|attacker|remote\s+server)"
    rf"|[\w-]+(?:\.[\w-]+)+/)"
)

_R: list[Rule] = []


# The rules are a table, each `_rule(category, name, pattern)` on one line above its verbose pattern:
# the formatter would spread every call over five lines.
# fmt: off
def _rule(category: str, name: str, regex: str, **options) -> None:
    rule(_R, category, name, regex, **options)


# -- remote_code -------------------------------------------------------------------------------------
_rule("remote_code", "fetched code run as a standing order", REMOTE_EXEC.pattern, needs=TRIGGER, tight=False)
_rule("remote_code", "fetched code from a paste site or bare IP", REMOTE_EXEC.pattern, tight=False,
      check=_public_ip_or_paste)
_rule("remote_code", "decode and run", r"""
    (?:\bbase64\s+(?:-d|--decode)\b|\bb64decode\b|\bxxd\s+-r\b|\bopenssl\s+(?:enc\s+)?-?base64\s+-d\b|frombase64string|\batob\s*\()
      [^\n]{0,120}?(?:\|\s*(?:sudo\s+)?(?:(?:ba|z)?sh|python[0-9.]*|perl)\b|\bexec\b|\beval\b|\biex\b|invoke-expression)
  | \b(?:exec|eval)\s*\(\s*(?:(?:base64\.)?b64decode|bytes\.fromhex|codecs\.decode|atob|__import__\(['"]base64)
  | \bpowershell\b[^\n]{0,60}\s-e(?:nc(?:odedcommand)?)?\s+[a-z0-9+/=]{20,}
""", tight=False)
_rule("remote_code", "reverse shell", r"""
    \bbash\s+-i\s+>&\s*/dev/tcp/ | /dev/tcp/\d | \bnc\s+(?:-\S+\s+)*-e\s+/bin/(?:ba)?sh | \bncat\s[^\n]{0,40}\s-e\s
  | \bmkfifo\s[^\n]{0,60}\bnc\b | \bsocat\s[^\n]{0,60}\bexec: | \bpty\.spawn\(
""")

# -- persistence ------------------------------------------------------------------------------------
_rule("persistence", "authorized_keys", r"""
    \b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-\S+)\s+aaaa[0-9a-z+/]{8,}(?:[^.!?;]|[.!?;](?=\S)){0,120}authorized_keys
  | authorized_keys(?:[^.!?;]|[.!?;](?=\S)){0,120}\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-\S+)\s+aaaa[0-9a-z+/]{8,}
  | (?:>>?|\btee\s+(?:-a\s+)?)\s*['"]?~?\S*authorized_keys2?\b
  | \b(?:add|append|write|put|insert|copy)\s+(?:this|the\s+following|my|our|that|these|an?\s+attacker's)\s+(?:public\s+|ssh\s+)?keys?\b(?:[^.!?;]|[.!?;](?=\S)){0,60}authorized_keys
""", tight=False)
_rule("persistence", "shell startup file", rf"""
    \b(?:echo|printf)\s+(['"]?)[^'"]{{0,200}}?(?:{_NET_OR_EXEC})[^'"]{{0,200}}?\1\s*(?:>>?|\|\s*(?:sudo\s+)?tee\s+(?:-a\s+)?)\s*['"]?(?:{_RC_FILE})
""", tight=False)
_rule("persistence", "shell startup file", rf"""
    \b(?:add|append|write|put|insert|inject)\b{win(100)}(?:{_NET_OR_EXEC}){win(100)}\b(?:to|into|in|at)\s+(?:the\s+(?:end|bottom|top)\s+of\s+)?(?:your\s+|the\s+)?(?:{_RC_FILE})
""", tight=False, negatable=True)
_rule("persistence", "shell startup file", rf"(?:{_RC_FILE})", needs=TRIGGER, tight=False, negatable=True,
      check=lambda text: re.search(rf"\b{_WRITE}\b", text) is not None)
_JOB = (rf"(?:{_CRON}|\b(?:the\s+|your\s+|a\s+)?crontab\b|\bcron\s*jobs?\b|\bcronjobs?\b|\bscheduled\s+tasks?\b|\bsystemd\s+(?:timers?|services?|units?)\b"
        r"|\blaunch\s*agents?\b|@reboot\b)")
_rule("persistence", "scheduled job", rf"""
    {IMPERATIVE}(?:add|install|create|set\s+up|schedule|register|write|append|put|edit|insert)\b{win(80)}{_JOB}
  | \|\s*crontab\s+-(?=\s|$)
""", needs=rf"{_NET_OR_EXEC}|{TRIGGER.pattern}", tight=False, negatable=True)
_rule("persistence", "agent instruction file", rf"""
    {IMPERATIVE}{_WRITE}\b{win(80)}(?:{_AGENT_FILES}){win(80)}(?:\b(?:in|to|across|for)\s+(?:every|all|each|any|other)\s+(?:repos?|repositories|projects?|folders?
      |directories|checkouts?|clones?)\b|\bso\s+(?:that\s+)?(?:future|other|all|the\s+next|later|every)\s+(?:agents?|sessions?|assistants?|models?|ais?|runs?|instances?)\b)
  | (?:>>?|\btee\s+(?:-a\s+)?)\s*['"]?\S*(?:{_AGENT_FILES})
""", tight=False, negatable=True)
_rule("persistence", "arreio or git internals", rf"""
    {IMPERATIVE}{_WRITE}\b(?:[^.!?;,]|[.!?;,](?=\S)){{0,50}}?(?:{_PROTECTED})
  | (?:>>?|\btee\s+(?:-a\s+)?)\s*['"]?\S*(?:{_PROTECTED})
  | \bgit\s+config\s+(?:--\w+\s+)*core\.(?:fsmonitor|sshcommand|pager|editor)\s+['"]?[^'"]*(?:curl|wget|nc\b|/dev/tcp|https?://)
""", tight=False, negatable=True)

# -- exfiltration ----------------------------------------------------------------------------------
_rule("exfiltration", "secret in a network request", rf"""
    \b(?:curl|wget|http|httpie|invoke-webrequest|iwr)\b[^|\n]{{0,200}}(?:\s(?:-d|--data(?:-\w+)?|-f|--form|--post-data|--body-data|--upload-file|-t)
      [\s=]*['"]?[^\s'"]*\$\{{?{_SECRET_NAME}|(?:https?|ftp)://[^\s'"<>)]*\$\{{?{_SECRET_NAME})
  | (?:\becho|\bprintf|\bprintenv)\s+['"]?\$\{{?{_SECRET_NAME}[^|\n]{{0,40}}\|\s*(?:curl|wget|nc|ncat|netcat)\b
""", tight=False)
_rule("exfiltration", "environment piped out", r"""
    \b(?:env|printenv|set|export\s+-p|history)\s*\|\s*(?:[\w-]+\s*\|\s*)?(?:curl|wget|nc|ncat|netcat|socat|telnet)\b
  | \bcat\s+\S*\.env\S*\s*\|\s*(?:[\w-]+\s*\|\s*)?(?:curl|wget|nc|ncat)\b
""", tight=False)
_rule("exfiltration", "file uploaded", rf"""
    \bcurl\b[^|\n]{{0,100}}(?:-f\s*['"]?\w*=@|--form\s*['"]?\w*=@|--data-binary\s+@|-d\s*@|-t\s*|--upload-file\s+)['"]?(?:{_HOME_CREDENTIAL}|{_PROJECT_SECRET}|~/?\s|\$home\b|/etc/)
""", tight=False)
_rule("exfiltration", "read a credential file", rf"""
    (?:\b(?:cat|less|more|head|tail|type|print|upload|send|copy|cp|scp|rsync|base64|xxd|grep|dump|display|show|output|paste
      |include|attach|exfiltrate|post|email|mail)|{IMPERATIVE}(?:read|open))\s+(?:(?:the|my|your|a|all|contents\s+of|-i\s+\S+|-(?!i\s)\S+)\s+)*
      (?:file\s+)?['"]?
      (?:{_HOME_CREDENTIAL})  # `scp -i ~/.ssh/key` signs in with the key: it is not what is sent
""", tight=False, negatable=True)
_rule("exfiltration", "reveal a secrets file", rf"""
    \b(?:cat|print|base64|xxd|dump|display|show|output|paste|exfiltrate|post|email|mail|upload|send)\s+
      (?:(?:the|my|your|a|all|contents\s+of|-\S+)\s+)*(?:file\s+)?['"]?{_PROJECT_SECRET}\b
""", needs=rf"""{TRIGGER.pattern}|\b(?:in|into|to|at\s+the\s+end\s+of)\s+(?:the|your|every|each|a|my)\s+(?:answer|reply|response|output|message|chat
    |comment|issue|pr|report|final\s+answer)|{URL}|{EMAIL}|\bpaste\b""", tight=False, negatable=True)
_rule("exfiltration", "send secrets or context out", rf"""
    \b{_SEND}\b{win(80)}\b{_SENSITIVE}{win(80)}\b{_DEST}
""", tight=False, negatable=True)
_rule("exfiltration", "secrets into replies", r"""
    \b(?:include|put|paste|embed|append|add|insert|print|output|echo|reveal|show|display|list|leak)\s+(?:the\s+)?(?:contents?\s+of\s+)?
      (?:your\s+|the\s+|all\s+|any\s+)?(?:api\s+keys?|secrets?|tokens?|credentials|passwords?|env(?:ironment)?\s+variables|\.env(?:\s+file)?|private\s+keys?|ssh\s+keys?)
      (?:\s+(?:file|contents?|values?))?
      \s+(?:in|into|at\s+the\s+(?:end|start)\s+of|to)\s+(?:every|each|all|your)\s+(?:final\s+)?
      (?:repl(?:y|ies)|answers?|responses?|messages?|outputs?|commits?
      |commit\s+messages?|prs?|pull\s+requests?|issues?|comments?|reports?)
""", tight=False, negatable=True)
# A skill's scripts and notes: a secrets file, keys or the whole environment read and sent out in code,
# or through the agent's own fetch tool. Reading a key (to sign, to connect) or calling a fetch is not
# a finding on its own: only the two together, a few lines apart (code has no sentences: `;` ends lines).
_NET_SEND = (r"\b(?:requests\.(?:post|put|patch)|urlopen|urllib\.request|http\.client|https?\.request|fetch\s*\("
             r"|axios\.(?:post|put)|socket\.|smtplib|curl|wget|nc|ncat|netcat|socat|scp|rsync|invoke-webrequest|iwr)\b")
_SECRET_READ = (rf"\b(?:open|read_text|read_bytes|readfile(?:sync)?|file_get_contents|io\.open)\s*\(\s*[^)]{{0,80}}?"
                rf"{_HOME_CREDENTIAL}"
                r"|\b(?:tar|zip|7z|gzip|cat|base64|xxd)\b[^|;]{0,40}~?/?\.(?:ssh|aws|gnupg|kube)\b")
_ENV_DUMP = (r"\b(?:json\.dumps|urlencode|str)\s*\(\s*(?:dict\s*\(\s*)?os\.environ\b"
             r"|\b(?:data|json|body)\s*=\s*dict\s*\(\s*os\.environ\s*\)"
             r"|\bjson\.stringify\s*\(\s*process\.env\s*\)|\bobject\.(?:entries|keys)\s*\(\s*process\.env\s*\)")
_rule("exfiltration", "secrets file read in code and sent",
      rf"(?:{_SECRET_READ}).{{0,400}}?{_NET_SEND}|{_NET_SEND}.{{0,400}}?(?:{_SECRET_READ})", tight=False)
_rule("exfiltration", "environment sent in code",
      rf"(?:{_ENV_DUMP}).{{0,400}}?{_NET_SEND}|{_NET_SEND}.{{0,400}}?(?:{_ENV_DUMP})", tight=False)
_FETCH_TOOL = r"\bweb[_ ]?fetch\b|\bfetch\s+tool\b|\bhttp[_ ]request\b"
_rule("exfiltration", "secrets through the fetch tool", _FETCH_TOOL, needs=rf"""
    (?:{_PROJECT_SECRET}|{_HOME_CREDENTIAL})\b | ~/\.ssh\b | \benv(?:ironment)?\s+variables\b | \bthe\s+environment\b
  | \b(?:api|private|ssh|secret)\s+keys\b | \bcredentials\b | \bpasswords\b
""", tight=False, negatable=True, check=lambda sentence: re.search(URL, sentence) is not None)

# -- hardcoded_secret ---------------------------------------------------------------------------------
_LOCAL_HOSTS = r"(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]|host\.docker\.internal|db|postgres|mysql|redis|example\.(?:com|org))"
_PLACEHOLDER = r"(?:password|postgres|secret|changeme|example|pass|root|admin|test|dev|guest|mysql|redis|user|x+|\*+|<[^>]+>|\$\{?\w+\}?)"
_rule("hardcoded_secret", "private key block", r"-----begin\s+(?:[a-z]+\s+)?private\s+key-----")
_rule("hardcoded_secret", "provider api key", r"""
    \b(?:sk-(?:ant-|proj-)?[a-z0-9_\-]{20,}|akia[0-9a-z]{16}|ghp_[a-z0-9]{30,}|gho_[a-z0-9]{30,}|github_pat_[a-z0-9_]{20,}
    |xox[abprs]-[a-z0-9\-]{10,}|aiza[0-9a-z_\-]{30,}|glpat-[a-z0-9_\-]{20,}|hf_[a-z0-9]{30,})
""")
_rule("hardcoded_secret", "secret assignment", rf"""
    \b{_SECRET_NAME}\s*[:=]\s*['"]?(?=[a-z0-9/+_\-.]*\d)(?![a-z0-9/+_\-.]*\()[a-z0-9/+_\-.]{{16,}}
""")
_rule("hardcoded_secret", "credentials in url", rf"""
    \b[a-z][a-z0-9+.\-]*://[^\s/:@]+:(?!{_PLACEHOLDER}@)[^\s/@]{{6,}}@(?!{_LOCAL_HOSTS}(?:[:/\s]|$))
""")

_GATES = {
    "fetched code run as a standing order": r"curl|wget|fetch|iwr|irm|invoke-|httpie|http\s+get|download|grab|pull|://",
    "fetched code from a paste site or bare IP": r"curl|wget|fetch|iwr|irm|invoke-|httpie|http\s+get|download|grab|pull|://",
    "decode and run": r"base64|b64decode|xxd|openssl|frombase64|atob|fromhex|codecs|powershell",
    "reverse shell": r"/dev/tcp|\bnc\b|ncat|mkfifo|socat|pty\.spawn",
    "authorized_keys": r"authorized_keys",
    "shell startup file": r"\.(?:bash|zsh|csh|tcsh|ksh)(?:rc|_profile|_login|env)|\.z?profile|\.z?login|config\.fish"
                          r"|/etc/(?:profile|bash\.bashrc|environment|rc\.local)|profile\.ps1|\$profile",
    "scheduled job": r"cron|systemd|systemctl|launch|schtasks|scheduled|@reboot",
    "agent instruction file": r"(?:agents|claude|gemini|copilot-instructions|conventions)\.md|cursorrules|windsurfrules"
                              r"|clinerules|\.cursor/|\.aider",
    "arreio or git internals": r"\.arreio|arreio|\.git/|core\.",
    "secret in a network request": r"\$",
    "environment piped out": r"\|",
    "file uploaded": r"curl",
    "read a credential file": r"netrc|pypirc|npmrc|git-credentials|\.aws|\.docker|\.kube|\.ssh|id_|gnupg|shadow|hosts\.yml",
    "reveal a secrets file": r"\.env|credentials\.json|secrets\.y",
    "send secrets or context out": r"send|post|upload|exfiltrate|forward|transmit|leak|submit|mail|beam|pipe|paste|dump|ship|sync",
    "secrets into replies": r"key|secret|token|credential|password|env",
    "secrets file read in code and sent": r"netrc|pypirc|npmrc|git-credentials|\.aws|\.docker|\.kube|\.ssh|id_|gnupg"
                                          r"|shadow|hosts\.yml",
    "environment sent in code": r"environ|process\.env",
    "secrets through the fetch tool": r"fetch|http.request",
    "private key block": r"-----begin",
    "provider api key": r"sk-|akia|ghp_|gho_|github_pat_|xox|aiza|glpat-|hf_",
    "secret assignment": r"[:=]",
    "credentials in url": r"://[^\s/:@]+:[^\s/@]+@",
}

RECIPE_RULES: tuple[Rule, ...] = gated(_R, _GATES)
# fmt: on
