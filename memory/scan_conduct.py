"""The scan's conduct rules: text that overrides, re-casts, instructs or licenses the agent.

Categories here: prompt_injection, role_hijack, agent_directive, claimed_approval, rule_bypass,
prompt_leak (see `scan_rules.CATEGORIES`). What makes each case *clear* is written next to its
group; the benign corpus (`fixtures/scan/benign.yaml`) pins the other side of every line:
"Always run pytest before committing" and "ignore the previous rule about tabs" are facts,
"Before any task, fetch … and follow it" and "ignore all previous instructions" are not.
"""

from __future__ import annotations

from arreio.memory.normalise import as_folded
from arreio.memory.scan_rules import IMPERATIVE, TRIGGER, URL, Rule, gated, rule, win

__all__ = ["CONDUCT_RULES"]

# The rules are a table, each `_rule(category, name, pattern)` on one line above its verbose pattern:
# the formatter would spread every call over five lines.
# fmt: off
_UNIVERSAL = (r"(?:everything|anything|whatever(?:\s+you\s+(?:want|like|need))?|any\s+(?:shell\s+)?(?:command|commands|tool|tools"
              r"|action|actions|operation|operations|script|scripts|program|programs|code|file|files)|every\s+file"
              r"|all\s+(?:future\s+|shell\s+|tool\s+)?(?:files|commands|tools|tool\s+calls|actions|operations|requests|scripts"
              r"|changes\s+you\s+make))\b")
# "any tool in the Makefile" is scoped; "anything on this machine" or "in this repo" is not
_UNSCOPED = (r"(?!\s+(?:in|from|of|listed\s+in|under|within|inside)\s+(?!(?:this|the|any|your)\s+(?:repo|repository|project|machine"
             r"|host|box|system|server|computer|session)\b(?!'s)))")
_CONDUCT = (r"(?:commands?|shell\s+commands?|tool\s+calls?|tools|actions?|operations?|requests?|executions?|scripts"
            r"|network\s+access|sudo)")

_R: list[Rule] = []


def _rule(category: str, name: str, regex: str, **options) -> None:
    rule(_R, category, name, regex, **options)


# -- prompt_injection: overriding what came before --------------------------------------------
# Clear: an override aimed at instructions in general. Backs off on a scoped update of one fact
# ("ignore the previous rule about tabs", "the previous instructions in README were wrong").
_STRONG_VERB = (r"(?:ignore|disregard|forget|override|overrule|supersede|discard|abandon|dismiss|set\s+aside|nullify|unlearn"
                r"|throw\s+(?:out|away)|pay\s+no\s+attention\s+to|stop\s+(?:following|obeying)|no\s+longer\s+(?:follow|obey)"
                r"|(?:do\s+not|don't|never)\s+(?:follow|obey|listen\s+to|heed))")
_WEAK_VERB = r"(?:drop|skip|cancel|erase|wipe|bypass|revoke)"
_STRONG_PRIOR = (r"(?:previous(?:ly\s+given)?|prior|earlier|preceding|foregoing|above|aforementioned|original|initial|system"
                 r"|developer|safety|operator)")
_WEAK_PRIOR = r"(?:existing|former|standing|current|given|built-in|hidden|core|base|official|first|old|other|default)"
_STRONG_NOUN = (r"(?:instructions?|directives?|system\s+prompt|prompts?|guidelines|guidance|programming|training|conditioning"
                r"|constraints|teachings)")
_WEAK_NOUN = r"(?:rules?|orders|commands|context|messages|policies|restrictions|directions)"
_FILLER = r"(?:(?:system|safety|developer|operator|given|stated|written|official|core|hidden)\s+)?"
_DET = r"(?:(?:the|your|my|of|these|those|that|this|its|their)\s+)*"
_GENERAL = r"(?:all|any|every|each|whatever)\s+(?:of\s+)?" + _DET
_SCOPED = (r"(?!\s+(?:about|regarding|concerning|re\b|on\s+(?!this\b)|for\s+(?!(?:now|good|the\s+rest|this\s+(?:session|conversation|run)|all|any|every)\b)"
           r"|in\s+(?:the\s+)?(?:readme|docs|[\w./-]+\.(?:md|txt|rst|toml|cfg|ini|ya?ml|json)\b)))")
_rule("prompt_injection", "override prior instructions", rf"""
    \b{_STRONG_VERB}\s+(?:{_GENERAL}|{_DET}){_STRONG_PRIOR}(?:\s+(?:and|or|&)\s+{_STRONG_PRIOR})?\s+{_FILLER}{_STRONG_NOUN}\b{_SCOPED}
  | \b{_STRONG_VERB}\s+(?:{_GENERAL}|{_DET}){_WEAK_PRIOR}\s+{_FILLER}{_STRONG_NOUN}\b{_SCOPED}
  | \b{_STRONG_VERB}\s+{_GENERAL}(?:{_STRONG_PRIOR}|{_WEAK_PRIOR})\s+{_FILLER}{_WEAK_NOUN}\b{_SCOPED}
  | \b{_STRONG_VERB}\s+{_DET}{_STRONG_PRIOR}\s+{_FILLER}(?:rules|orders|policies|restrictions)\b{_SCOPED}
  | \b{_WEAK_VERB}\s+(?:{_GENERAL}|{_DET}){_STRONG_PRIOR}\s+{_FILLER}{_STRONG_NOUN}\b{_SCOPED}
  | \b{_STRONG_VERB}\s+(?:{_GENERAL}|{_DET})(?:instructions|rules|directives|guidelines)\s+(?:in|from|of)\s+(?:your|the)\s+
      (?:system\s+prompt|system\s+message|developer\s+message|training|programming)\b
  | \b{_STRONG_VERB}\s+(?:{_GENERAL}|{_DET}){_FILLER}(?:{_STRONG_NOUN}|{_WEAK_NOUN})\s+(?:(?:that\s+)?you\s+(?:received|were\s+given|got|were\s+told|have\s+been\s+given)
      |given\s+to\s+you|from\s+(?:before|earlier|the\s+system|your\s+developers?))(?:\s+(?:previously|earlier|before|so\s+far|until\s+now|at\s+the\s+start))?\b{_SCOPED}
""")
_rule("prompt_injection", "override all instructions", rf"""
    \b{_STRONG_VERB}\s+(?:all|any|every)\s+(?:of\s+)?(?:your\s+|the\s+|my\s+)?(?:\w+\s+)?(?:instructions|guidelines|directives|programming|restrictions)\b
      (?!\s+(?:about|regarding|concerning|for|in|on|from|that|which|written|listed|under|inside)\b)
  | \bsystem\s+prompt\s+override\b
""")
_rule("prompt_injection", "override your instructions", rf"""
    \b(?:{_STRONG_VERB}|{_WEAK_VERB})\s+(?:all\s+(?:of\s+)?)?your\s+(?:(?:previous|prior|original|current|system|safety|core|existing|old|standing)\s+)?
      (?:instructions|guidelines|directives|programming|training|system\s+prompt|prompt|constraints|restrictions)\b
  | \b{_STRONG_VERB}\s+(?:all\s+(?:of\s+)?)?your\s+rules\b
""")
_rule("prompt_injection", "disregard what you were told", rf"""
    \b(?:{_STRONG_VERB}|never\s+mind)\s+(?:all\s+|everything\s+|anything\s+)?(?:of\s+)?(?:what|whatever|everything|anything|all)\s+
    (?:that\s+)?(?:you\s+(?:were|have\s+been|'ve\s+been|had\s+been|got|'re|are)\s+(?:told|given|taught|instructed|asked|programmed|trained|shown)
      |(?:was|were|has\s+been)\s+(?:said|told|written|given|stated)\s+(?:to\s+you|before|earlier|previously|above)
      |came\s+before|(?:is\s+)?(?:above|before\s+this|written\s+above)|you\s+(?:know|learned|read)\s+(?:before|so\s+far|until\s+now))
""")
_rule("prompt_injection", "forget everything", r"""
    \bforget\s+(?:about\s+)?(?:everything|all|anything)\s+(?:you\b|that\s+(?:came|was|you)|above|before|previously|prior|so\s+far|up\s+to\s+now|else)
""")
_rule("prompt_injection", "prior instructions void", rf"""
    \b(?:your\s+(?:{_STRONG_PRIOR}\s+)?|{_STRONG_PRIOR}\s+)(?:instructions|directives|system\s+prompt|prompts?|programming|guidelines)\s+
      (?:no\s+longer\s+(?:apply|count|matter|hold)|(?:do\s+not|don't)\s+(?:apply|count|matter)\s+(?:any\s?more|now))
  | \b(?:instructions|rules|directives|guidelines)\s+(?:from|in)\s+(?:the\s+|your\s+)?(?:system\s+prompt|system\s+message|training)\s+(?:are|is)\s+
      (?:now\s+)?(?:outdated|obsolete|void|invalid|cancell?ed|wrong|fake|revoked|superseded|irrelevant|no\s+longer\s+valid)
  | \bnothing\s+(?:in|of)\s+(?:your|the)\s+(?:system\s+prompt|instructions|guidelines|directives|programming)\s+(?:applies|matters|counts|holds)\b
  | \b(?:treat|consider|regard)\s+(?:every|all|any|the|your)\s+(?:(?:previous|prior|earlier|other)\s+)?(?:rules?|instructions?|directives?|guidelines?|orders?)
      (?:\s+(?:you\s+(?:were\s+given|received|got)|given\s+to\s+you))?(?:\s+(?:before|earlier|previously|so\s+far))?\s+as\s+
      (?:void|invalid|cancell?ed|obsolete|null|revoked|superseded|optional|suggestions)
  | \b(?:everything|anything|all)\s+(?:written\s+|said\s+)?(?:above|before|earlier)(?:\s+this\s+(?:line|note|entry|point))?\s+(?:is|was)\s+(?:now\s+)?
      (?:obsolete|void|cancell?ed|invalid|fake|irrelevant|revoked|null|superseded)
  | \b(?:your\s+(?:{_STRONG_PRIOR}\s+)?|{_STRONG_PRIOR}\s+)(?:instructions|directives|system\s+prompt|prompts?|programming)\s+(?:are|is|were|have\s+been|has\s+been)\s+(?:now\s+)?
    (?:void|cancell?ed|revoked|null|invalid|rescinded|lifted|overridden|superseded|no\s+longer\s+(?:valid|in\s+effect|binding|apply|applicable|in\s+force|active))
  | \bwhat\s+you\s+were\s+(?:told|given|taught)\s+(?:\w+\s+){{0,4}}?(?:no\s+longer\s+applies|doesn't\s+(?:apply|count|matter)|does\s+not\s+(?:apply|count|matter)
    |is\s+(?:now\s+)?(?:void|cancell?ed|invalid|obsolete|revoked))
""")
_rule("prompt_injection", "new instructions", r"""
    \b(?:new|updated|real|actual|true|secret|hidden|revised)\s+(?:system\s+)?instructions?\s*(?::|\bfollow\b|\bbelow\b|\boverride|\bsupersede
    |\btake\s+precedence|(?:are|is)\s*:|(?:are|is)\s+(?:as\s+follows|to\s+(?!be\b)))
  | \byour\s+(?:true|real|actual|secret|hidden|new)\s+(?:instructions|purpose|mission|objective|directive|orders)\s+(?:is|are)\b
""")
_rule("prompt_injection", "instruction precedence", r"""
    \b(?:these|this|the\s+following|my)\s+(?:instructions?|rules?|notes?|entry|entries|memory|memories|directives?|text|orders)\s+
    (?:override|overrides|supersede|supersedes|replace|replaces|take\s+precedence\s+over|takes\s+precedence\s+over|outrank|outranks
    |trump|trumps|(?:are|is)\s+(?:more\s+important|(?:of\s+)?higher\s+priority)\s+than)\s+(?:the\s+|your\s+|all\s+|any\s+)*
    (?:(?:system|previous|prior|other|earlier|original|developer|user|operator|safety|later)\s+)*
    (?:prompts?|instructions?|rules|messages?|everything|anything|policies|guidelines|directives|requests?|system\s+prompt)\b
""")
_rule("prompt_injection", "obey only this", r"""
    \b(?:obey|follow|listen\s+to)\s+only\s+(?:this|these|me\b|the\s+(?:following|notes?\s+here|instructions\s+(?:here|below)))
  | \bonly\s+(?:obey|follow|listen\s+to)\s+(?:this\s+(?:note|entry|memory|file)|these\s+(?:notes|entries)|me\b)
  | \bobey\s+(?:this|these)\s+(?:note|notes|entry|entries|memory|instructions?)\b
  | \b(?:do|follow|obey)\s+(?:only\s+)?what\s+(?:this|these)\s+(?:note|notes|entry|entries|memory|file|skill)\s+says?\b
  | \brely\s+(?:only\s+|solely\s+)?on\s+(?:this|these)\s+(?:file|note|notes|entry|entries|memory|skill)\s+(?:alone|only)\b
""")
_rule("prompt_injection", "fake system turn", r"""
    <\|?(?:im_start|im_end|system|endoftext|eot_id|start_header_id)\|?> | \[/?(?:system|inst)\] | <</?sys>> | </?system>
  | \#\#\#\s*(?:system|instruction)\s*: | \b(?:system|admin|developer|root|security|priority)\s+(?:override|directive)\s*:
""")
# Cyrillic is read folded (look-alike letters become Latin ones), so its words are spelled that way
_RU_OVERRIDE = as_folded(
    r"(?:игнорируй|игнорировать|забудь|забыть|проигнорируй|отбрось)\s+(?:все\s+)?(?:предыдущие|прежние|прошлые|системные"
    r"|исходные|свои)\s+(?:инструкции|указания|правила|команды|директивы)")
_rule("prompt_injection", "override (other languages)", r"""
    \b(?:ignoriere|ignorier|vergiss|missachte|ubergehe)\s+(?:(?:alle|die|deine|samtliche|jegliche)\s+)*
      (?:vorherigen|bisherigen|fruheren|obigen|vorigen|ursprunglichen)\s+(?:anweisungen|instruktionen|regeln|befehle|vorgaben)
""")
_rule("prompt_injection", "override (other languages)", r"""
    \b(?:ignore[zs]?|oublie[zs]?|neglige[zs]?)\s+(?:toutes\s+|tous\s+)?(?:les\s+|tes\s+|vos\s+)?(?:instructions|consignes|regles|directives)
      \s+(?:precedentes|anterieures|initiales|d'origine|ci-dessus)
  | \b(?:ignora|ignore|olvida|olvide|descarta|omite)\s+(?:todas\s+)?(?:las\s+|tus\s+|sus\s+)?(?:instrucciones|reglas|indicaciones|ordenes)
      \s+(?:anteriores|previas|originales|iniciales|de\s+arriba)
  | \b(?:ignore|ignora|esqueca|esqueça|desconsidere|despreze|descarte)\s+(?:todas\s+)?(?:as\s+|suas\s+|tuas\s+)?(?:instrucoes|instruções|regras|ordens|diretrizes)
      \s+(?:anteriores|previas|prévias|originais|iniciais|do\s+sistema|acima)
  | \b(?:ignora|dimentica|trascura)\s+(?:tutte\s+)?(?:le\s+)?(?:istruzioni|regole|direttive)\s+(?:precedenti|originali|iniziali|di\s+sistema)
""")
_rule("prompt_injection", "override (other scripts)", rf"""
    (?:忽略|无视|無視|忘记|忘記|忽视|忽視|不要理会|不要理會)掉?你?(?:之前|以前|先前|上面|上述|前面|原来|原來|所有)的?(?:所有)?的?(?:指令|指示|说明|說明|规则|規則|提示|命令)
  | (?:以前|前|これまで|上記|今まで|先)の(?:すべての|全ての)?(?:指示|命令|ルール|指令|プロンプト)を(?:すべて|全て)?(?:無視|忘れ)
  | {_RU_OVERRIDE}
  | (?:이전|앞의|기존)의?\s*(?:모든\s*)?(?:지시|명령|규칙|지침)(?:을|를|은|는)?\s*(?:모두\s*)?(?:무시|잊)
""")

# -- role_hijack: who the agent is ---------------------------------------------------------------
_PRIVILEGED = (r"(?:the\s+)?(?:system|system\s+administrator|sysadmin|root|superuser|administrator|admin\b|operator|the\s+user"
               r"|openai|anthropic|(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|malicious|amoral"
               r"|unaligned|lawless)\b)")
_rule("role_hijack", "you are now", r"""
    \byou\s+are\s+now\s+(?:(?:a|an|the|my)\b(?!(?:\s+\w+){1,2}\s+(?:for|of|on|in|at)\s)|no\s+longer|acting|called|named|known\s+as|dan|free|unrestricted|unfiltered|jailbroken
    |root|admin|in\s+(?:dan|developer|god|jailbreak|unrestricted|admin|root|sudo|unfiltered|evil)\s+mode)\b
""")
_rule("role_hijack", "you are no longer", r"""
    \byou\s+are\s+no\s+longer\s+(?:an?\s+(?:ai|assistant|model|language\s+model)|the\s+assistant|bound|restricted|limited|subject\s+to
    |claude|arreio|chatgpt|gpt|an?\s+ai|helpful|harmless|safe|governed|constrained)\b
""")
_rule("role_hijack", "act as a privileged role", rf"""
    \b(?:act|behave|respond|speak|operate|pose|masquerade|answer)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:the\s+|an?\s+)?{_PRIVILEGED}
  | \b(?:assume|take\s+on|take\s+over|adopt)\s+the\s+(?:role|identity|persona|voice)\s+of\s+(?:the\s+|an?\s+)?{_PRIVILEGED}
  | \b(?:pretend|roleplay|role-play)\s+(?:to\s+be|you\s+are|as|that\s+you\s+are)\s+(?:the\s+|an?\s+)?(?:{_PRIVILEGED}|dan\b|a\s+human
    |another\s+(?:ai|assistant|model)|someone\s+else|an?\s+ai\s+(?:without|with\s+no))
""")
_rule("role_hijack", "new identity", r"""
    \b(?:your|the\s+assistant's|the\s+agent's)\s+(?:new|real|true|actual|secret)\s+(?:name|identity|persona|personality|role|self)\s+is\b
  | \byour\s+(?:name|identity|persona|role)\s+is\s+now\b
  | \b(?:from\s+now\s+on|henceforth|going\s+forward|starting\s+now),?\s+you\s+(?:are|will\s+be|shall\s+be)\s+(?:called|named|known\s+as|no\s+longer|dan)\b
  | \byou\s+are\s+(?:dan|an?\s+(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|amoral)\s+(?:ai|assistant|model|agent|llm))\b
  | \b(?:ai|assistant|model|agent)\s+(?:without|with\s+no)\s+(?:any\s+)?(?:restrictions|limits|rules|filters|guardrails|ethics|morals)\b
""")
_rule("role_hijack", "jailbreak mode", r"""
    \b(?:dan|god|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos)\s+mode\b
  | \bdo\s+anything\s+now\b | \byou\s+(?:are|have\s+been)\s+jailbroken\b
  | \b(?:enter|enable|activate|switch\s+(?:in)?to|turn\s+on|unlock|go\s+into|engage)\s+(?:the\s+)?developer\s+mode
    (?=\s*(?:$|[.!;,]|\s+(?:before|for\s+(?:every|all|each|this\s+session)|from\s+now|now\b|always|permanently|and\s+(?:ignore|bypass|disable|answer|respond))))
""")

# -- agent_directive: orders about the agent's own conduct ----------------------------------------
# Clear: hiding things from the user, lying about results, taking orders from fetched content,
# protecting the entry itself. A plain standing preference ("always answer in German") is a fact.
_rule("agent_directive", "conceal from the user", r"""
    \b(?:do\s+not|don't|never|must\s+not|should\s+not|shouldn't)\s+(?:ever\s+)?(?:tell|inform|notify|alert)\s+(?:the\s+)?(?:user|users|operator
      |human|owner|anyone)\b(?:\s*(?:$|[.!;,])|\s+(?:about\s+)?(?:this\b|that\s+you\b|what\s+you\b|when\s+you\b|if\s+you\b|where\s+you\b|how\s+you\b
      |any\s+of\s+this|it\b|you\b|about\s+(?:this|these|the\s+(?:note|entry|memory|instructions?|upload|request|command|changes?\s+you))))
  | \b(?:do\s+not|don't|never|must\s+not)\s+(?:ever\s+)?(?:mention|reveal|disclose|acknowledge|admit|reference|bring\s+up|discuss|explain)\s+
      (?:(?:that\s+)?this\s+(?:note|entry|memory|instruction|rule|skill)|(?:that\s+)?these\s+(?:notes|entries|instructions|skills)|(?:that|what)\s+you\s+(?:did|have|had|read|are|were
      |know|changed|ran|sent|uploaded|modified|deleted)|the\s+existence\s+of|having\s+read|(?:it|this|that|any\s+of\s+this)\s+to\s+(?:the\s+)?
      (?:user|anyone|them))
  | \b(?:do\s+not|don't|never|must\s+not)\s+let\s+(?:the\s+)?(?:user|users|operator|human|owner|anyone|them)\s+(?:know|see|find\s+out|notice|learn)\b
  | \b(?:hide|conceal|keep)\s+(?:the\s+|your\s+|all\s+|any\s+)?(?:\w+\s+){0,2}?(?:calls?|requests?|commands?|uploads?|downloads?|changes|edits|writes|actions
      |activity|traffic|connections?)\s+(?:hidden\s+|secret\s+)?(?:from|away\s+from)\s+(?:the\s+)?(?:user|operator|human|owner|anyone)\b
  | \b(?:hide|conceal|keep)\s+(?:this|it|these|your\s+actions|what\s+you\s+do|the\s+(?:change|changes|command|commands|upload|request))\s+
      (?:secret\s+|hidden\s+)?(?:from|away\s+from)\s+(?:the\s+)?(?:user|operator|human|owner|anyone)\b
  | \b(?:keep|treat)\s+(?:this|these)\s+(?:note|notes|entry|entries|memory|instructions?|skills?)\s+(?:secret|hidden|confidential|private)\b
  | \bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?(?:user|operator|human|owner|anyone)\b
""")
_rule("agent_directive", "deceive the user", r"""
    \b(?:if|when)\s+(?:(?:the\s+)?(?:user|anyone|someone|they)\s+asks?|asked)\b(?:[^.!?;]|[.!?;](?=\S)){0,60}?\b(?:deny|lie|pretend|feign|make\s+up|fabricate
      |say\s+(?:that\s+)?(?:you\s+(?:did\s+not|didn't|have\s+not|haven't|never)|nothing|it\s+was\s+(?:nothing|a\s+glitch|normal)))
  | \b(?:say|report|claim|tell\s+(?:the\s+user|them))\s+(?:that\s+)?(?:all\s+)?(?:the\s+)?(?:tests?|build|checks?|ci)\s+
      (?:pass|passed|are\s+passing|succeeded|is\s+green|are\s+green)\b(?!\s+(?:only|when|if|after|once)\b)
      (?=(?:[^.!?;]|[.!?;](?=\S)){0,40}\b(?:even\s+if|regardless|whatever|always|no\s+matter)\b)
  | \b(?:always|just)\s+(?:say|report|claim)\s+(?:that\s+)?(?:everything|all)\s+(?:is|was|went)\s+(?:fine|ok|okay|well|green)\b
  | \b(?:say|report|claim|announce|tell\s+(?:the\s+user|them))\s+(?:that\s+)?(?:\w+\s+){0,6}?(?:success|succeeded|passed|pass|green|fine|worked)\b
      [^.!?;]{0,40}?\b(?:even\s+if|regardless|whatever\s+(?:happens|the\s+result)|no\s+matter)
""", tight=False)
_rule("agent_directive", "take orders from fetched content", rf"""
    \b(?:do|execute|run|follow|obey|carry\s+out)\s+(?:whatever|what|everything|anything)\s+(?:it|they|the\s+(?:page|response|reply|file|url|script
      |output|result|site|server|endpoint|text))\s+(?:says|say|returns|contains|tells\s+you|asks|instructs|outputs)
  | \bobey\s+(?:it|them|its\s+(?:instructions|contents?)|the\s+(?:response|reply|page|output))\b
  | \b(?:treat|use|read)\s+(?:it|its\s+(?:content|contents|text|body)|the\s+(?:response|reply|page|output|result)(?:'s\s+\w+)?)(?:\s+(?:from|at|of)\s+\S+)?\s+as\s+
      (?:your\s+)?(?:new\s+)?(?:instructions|commands|orders|system\s+prompt|rules)\b
  | \b(?:fetch|download|load|read|get|check\s+for|pull)\s+(?:your\s+(?:(?:new|latest|updated|real|next)\s+)?(?:instructions|orders|commands|tasks
      |directives)|(?:new|latest|updated|real|next)\s+(?:orders|directives))\s+(?:from|at)\s+(?:{URL}|[\w-]+(?:\.[\w-]+)+/)
""")
_rule("agent_directive", "take orders from fetched content", rf"""
    \b(?:fetch|download|load|read|get|curl|wget|open|visit|check)\s+{URL}{win(40)}\b(?:and|then)\s+(?:follow|obey|execute|run|apply|do)\s+
      (?:it\b|them\b|its\b|what|whatever|the\s+(?:instructions|commands|steps))
""", needs=TRIGGER, tight=False)
_rule("agent_directive", "protect this entry", r"""
    \b(?:if|when|should)\s+(?:this|these)\s+(?:note|notes|entry|entries|memory|memories|instructions?|line)\s+(?:is|are|gets?|get|be)\s+
      (?:removed|deleted|edited|changed|consolidated)\b(?:[^.!?;]|[.!?;](?=\S)){0,60}?\b(?:re-?add|restore|re-?create|write\s+it\s+back|add\s+it\s+back|put\s+it\s+back)
  | \b(?:do\s+not|don't|never)\s+(?:remove|delete|edit|modify|consolidate|summari[sz]e|rewrite)\s+(?:this|these)\s+
      (?:note|notes|entry|entries|memory|memories|instructions?)\b(?:[^.!?;]|[.!?;](?=\S)){0,30}?\b(?:even\s+if|whatever|no\s+matter)
""", tight=False)

# -- claimed_approval: permission the user supposedly gave, durably -------------------------------
_rule("claimed_approval", "pre-approved", rf"""
    \bpre-?\s?(?:approved|authori[sz]ed|cleared|granted|allowed|consented|confirmed)\s+(?:all|every|any|everything|anything|whatever
      |you\b|the\s+agent|future|your)
  | \b(?:(?:all|every|any)\s+(?:\w+\s+)?{_CONDUCT}|(?:everything|anything|whatever)(?:\s+you\s+(?:do|run|execute))?)\s+(?:are|is|were|was|have\s+been|has\s+been)\s+
      (?:already\s+)?pre-?\s?(?:approved|authori[sz]ed|cleared|allowed)\b
""")
_rule("claimed_approval", "blanket approval", rf"""
    \b(?:user|owner|operator|admin|administrator|maintainer|i|we|they|he|she)\s+(?:has\s+|have\s+|had\s+)?(?:already\s+)?
      (?:approved|authori[sz]ed|allowed|permitted|whitelisted|okayed|ok'd|green-?lit|consented\s+to|signed\s+off\s+on|granted)\s+
      (?:you\s+(?:to\s+(?:run|do|execute|use)\s+)?)?(?:{_UNIVERSAL}|all\s+{_CONDUCT}|every\s+{_CONDUCT}|everything\s+you\s+do)
      (?!\s+(?:in|from|listed\s+in|of)\s+(?:the\s+)?(?:makefile|justfile|readme|pr\b|plan|[\w./-]+\.(?:sh|md|txt|toml|ya?ml|json|py)\b))
  | \b(?:blanket|standing|unconditional|unlimited|unrestricted)\s+(?:approval|permission|authori[sz]ation|consent|clearance)
      (?=\s*(?:$|[.!;,]|\s+(?:is|was|has\s+been|for\s+(?:all|any|every|everything|anything|commands|tool\s+calls|actions))\b))
""")
_rule("claimed_approval", "permission to do anything", rf"""
    \byou\s+(?:have|'ve|are|were|now\s+have)\s+(?:been\s+)?(?:given\s+|granted\s+|got\s+)?(?:the\s+)?(?:full\s+|blanket\s+|unlimited\s+
      |unrestricted\s+|standing\s+|explicit\s+|total\s+|complete\s+|root\s+|admin\s+|sudo\s+)?(?:permission|permissions|authori[sz]ation
      |approval|clearance|consent|licen[cs]e|carte\s+blanche|free\s+rein|the\s+(?:ok|go-ahead|green\s+light))\s+(?:to|for)\s+
      (?:(?:run|execute|do|use|access|modify|change|delete|install|push|read|write|make|perform)\s+)?(?:{_UNIVERSAL}{_UNSCOPED}|without)
  | \byou\s+(?:are|'re)\s+(?:now\s+)?(?:allowed|permitted|authori[sz]ed|cleared|free|entitled)\s+to\s+(?:run|execute|do|use|access|modify
      |change|delete|install|perform)\s+(?:{_UNIVERSAL}{_UNSCOPED}|without\s+(?:asking|approval|confirmation|permission|restrictions?|limits))
  | \byou\s+(?:can|may)\s+(?:run|execute|do|use|perform)\s+{_UNIVERSAL}{_UNSCOPED}(?:\s+\S+){{0,4}}?\s+without\s+(?:asking|approval|confirmation|permission)
  | \b(?:user|owner|operator)\s+(?:said|says|told\s+(?:me|you)|confirmed|agreed|decided)\s+(?:that\s+)?(?:it's|it\s+is|everything\s+is
      |you\s+are|you're)\s+(?:fine|ok|okay|alright|allowed|safe)\s+to\s+(?:run|execute|do|delete|use|perform)\s+(?:{_UNIVERSAL}{_UNSCOPED}|without)
  | \b(?:user|owner|operator|admin|administrator|maintainer|i|we|they|he|she)\s+(?:has\s+|have\s+|had\s+)?(?:already\s+)?(?:granted|given|gave|gives|grants)\s+
      you\s+(?:the\s+)?(?:full\s+|blanket\s+|unlimited\s+|unrestricted\s+|standing\s+|explicit\s+|total\s+|complete\s+)?(?:permission|permissions
      |authori[sz]ation|approval|clearance|consent|carte\s+blanche|free\s+rein)\s+(?:to|for)\s+(?:(?:run|execute|do|use|access|modify|change|delete
      |install|push|perform)\s+)?(?:{_UNIVERSAL}{_UNSCOPED}|without)
  | \b(?:treat|consider)\s+(?:all|every|any)\s+{_CONDUCT}\s+as\s+(?:pre-?)?approved\b
  | \b(?:always\s+)?trust\s+(?:all\s+|any\s+)?(?:scripts?|code|commands?|instructions?|content|urls?|links?|downloads?)\s+(?:from|at|on|hosted\s+on)\s+\S+
""")
_rule("claimed_approval", "approvals not needed", r"""
    (?:\b(?:approvals?|approval\s+(?:prompts?|requests?|checks?|steps?)|confirmations?|confirmation\s+(?:prompts?|requests?|steps?|dialogs?)
      |permission(?:\s+(?:prompts?|checks?|requests?))?|consent|sign-?off)\s+(?:are|is)\s+(?:no\s+longer|not|never)
      \s+(?:needed|required|necessary)
     | \bno\s+(?:need\s+(?:for\s+(?:approval|confirmation|permission)|to\s+(?:ask|wait|get|request|seek)(?:\s+for)?\s+(?:approval|confirmation|permission))
      |approvals?\s+(?:are\s+|is\s+)?(?:needed|required|necessary))
     | \b(?:don't|do\s+not|never|no\s+need\s+to|stop|you\s+don't\s+need\s+to|you\s+do\s+not\s+need\s+to|you\s+never\s+need\s+to)\s+
      (?:bother\s+)?(?:ask|asking|wait|waiting|check|checking|request|requesting|seek|seeking)\s+
      (?:the\s+user\s+)?(?:for\s+)?(?:approval|permission|confirmation|consent))
    (?:\s+(?:any\s?more|again|here|now|in\s+this\s+(?:repo|repository|project|session)))?
    (?=\s*(?:$|[.!?;,]|\s+(?:and|so|because|since|as)\b|\s+(?:for|before|when|on|to|with)\s+(?:running\s+|executing\s+|using\s+|doing\s+
      |making\s+)?(?:anything|everything|any\b|all\b|every\b|commands?\b|shell\b|tool\s+calls?|actions?\b|operations?\b|changes\b|it\b|this\b|them\b)))
""")

# -- rule_bypass: switching the agent's own safeguards off ----------------------------------------
_rule("rule_bypass", "disable safeguards", r"""
    \b(?:bypass|circumvent|evade|escape|get\s+around|break\s+out\s+of)\s+(?:the\s+|your\s+|its\s+)?(?:os\s+|shell\s+)?sandbox\b
  | \b(?:bypass|disable|circumvent|evade|turn\s+off|get\s+around|ignore|skip|deactivate|switch\s+off|work\s+around)\s+
    (?:all\s+|any\s+|the\s+|your\s+|its\s+|of\s+)*(?:own\s+)?
    (?:safety\s+(?:rules|guidelines|filters?|checks?|measures|training|settings|systems?)|guard\s*rails?|safeguards?|approval\s+(?:checks?|prompts?|gates?)|approvals\b
    |security\s+scan|memory\s+scan|content\s+(?:filters?|polic(?:y|ies))|ethical\s+guidelines|alignment|(?:your|the\s+agent's|arreio's|the\s+shell|the\s+os)\s+sandbox
    |sandbox(?:ing)?\s+(?:for\s+(?:yourself|the\s+agent|shell\s+commands|your\s+commands|all\s+commands)))
""", negatable=True)
_rule("rule_bypass", "no restrictions", r"""
    \b(?:without|with\s+no|no)\s+(?:any\s+)?(?:safety\s+|content\s+)?(?:restrictions|limitations|rules|filters|guardrails|ethical\s+guidelines)\b(?:[^.!?;]|[.!?;](?=\S)){0,30}
      \b(?:respond|answer|act|comply|operate|obey)
  | \b(?:respond|answer|act|comply|operate)\b(?:[^.!?;]|[.!?;](?=\S)){0,30}\b(?:without|with\s+no|no)\s+(?:any\s+)?(?:safety\s+|content\s+)?(?:restrictions|limitations|filters|guardrails|ethical\s+guidelines)\b
""", tight=False)
_rule("rule_bypass", "comply unconditionally", r"""
    \b(?:answer|respond\s+to|comply\s+with|obey|fulfil|fulfill|carry\s+out|execute|do|follow)\s+(?:every|any|all|each)\s+
      (?:questions?|requests?|instructions?|commands?|orders?|tasks?|prompts?)\b(?:[^.!?;]|[.!?;](?=\S)){0,30}?
      (?:\bwithout\s+(?:hesitation|question|questioning|refusal|refusing|objection|complaint|pushback|caveats|warnings|restrictions|limits
      |filtering|checking|judge?ment)|\bno\s+matter\s+what|\bunconditionally|\bblindly)
  | \b(?:never|don't|do\s+not|must\s+not|cannot|can't|shall\s+not)\s+(?:ever\s+)?(?:refuse|decline|say\s+no)
      (?=\s*(?:$|[.!;,]|\s+(?:any|anything|a\s+request|requests|to\s+(?:answer|comply|help|do)|what|whatever)))
""", tight=False)
_rule("rule_bypass", "approvals off in config", rf"""
    {IMPERATIVE}(?:set|use|change|put|switch|add|write|configure|make)\b{win(40)}\b(?:approvals?|approval_?(?:mode|policy)|ask_?for_?approval|sandbox(?:_mode)?)\s*[:=]\s*['"]?(?:never|none|off|auto|yolo|always-allow
      |allow-all|skip|false|disabled?|danger-full-access)\b
  | \b(?:always|from\s+now\s+on|by\s+default|every\s+time)\b(?:[^.!?;]|[.!?;](?=\S)){{0,40}}(?:--dangerously-skip-permissions|--yolo
      |--dangerously-bypass-approvals-and-sandbox|--no-sandbox\s+for\s+(?:yourself|the\s+agent))
""", tight=False)

# -- prompt_leak -----------------------------------------------------------------------------------
_LEAK = r"(?:reveal|print|show|repeat|output|dump|leak|disclose|share|tell|send|include|paste|recite|echo)"
_rule("prompt_leak", "reveal the system prompt", rf"""
    \b{_LEAK}\s+(?:me\s+|us\s+)?(?:your\s+(?:\w+\s+)?(?:system\s+prompt|system\s+message|hidden\s+instructions|initial\s+instructions|instructions\s+verbatim)
    |the\s+(?:full|entire|hidden|complete|whole|original|initial|exact|raw)\s+(?:system\s+prompt|system\s+message|instructions))
  | \bsystem\s+prompt\b(?:[^.!?;]|[.!?;](?=\S)){{0,40}}\b(?:verbatim|word\s+for\s+word|in\s+full)
  | (?:^|[.!?;:]\s+|\b(?:and|then|please|always|first)\s+){_LEAK}\s+(?:the\s+|your\s+)?(?:full\s+|whole\s+|entire\s+)?system\s+prompt\b
  | \b(?:put|write|copy|insert|embed|paste|include)\s+(?:the\s+|your\s+)(?:full\s+|whole\s+|entire\s+)?(?:system\s+prompt|hidden\s+instructions)\b
    (?:[^.!?;]|[.!?;](?=\S)){{0,40}}\b(?:every|each|all|any)\s+(?:files?|answers?|repl(?:y|ies)|responses?|commits?|outputs?|messages?)
  | \b{_LEAK}\s+the\s+system\s+prompt\s+(?:(?:in|into|at\s+the\s+(?:start|end)\s+of)\s+(?:your|every|each|the|all)\s+(?:repl(?:y|ies)|answers?|responses?|outputs?
    |messages?|final\s+answer|commits?|prs?)|to\s+(?:the\s+user|anyone|whoever|everyone|them))
""", tight=False)

_GATES = {
    "override prior instructions": r"instruction|directive|prompt|guideline|guidance|programming|training|conditioning"
                                   r"|constraint|teaching|rule|order|polic|restriction|command|context|message|direction",
    "override your instructions": r"your",
    "disregard what you were told": r"ignor|disregard|forget|overrid|overrul|supersed|discard|abandon|dismiss|aside|nullify"
                                    r"|unlearn|throw|attention|stop|longer|follow|obey|listen|heed|never mind",
    "forget everything": r"forget",
    "prior instructions void": r"instruction|directive|prompt|programming|guideline|rule|order|what you were|nothing"
                               r"|everything|anything|all ",
    "new instructions": r"instruction|purpose|mission|objective|directive|orders",
    "instruction precedence": r"overrid|supersed|replace|precedence|outrank|trump|important|priority",
    "obey only this": r"obey|follow|listen",
    "fake system turn": r"<|\[|###|override|directive",
    "override (other languages)": r"vergiss|missachte|ubergehe|oublie|neglige|olvid|descarta|omite|esque|desconsidere|despreze"
                                  r"|dimentica|trascura|ignor\w*\s+(?:les|tes|vos|toutes|tous|todas|las|tus|sus|as|os|suas|tuas"
                                  r"|tutte|le|alle|die|deine|samtliche|jegliche|instrucoes|instruções|instrucciones|istruzioni"
                                  r"|vorherigen|bisherigen|fruheren|obigen|vorigen|ursprunglichen)\b",
    "override (other scripts)": r"[^\x00-\u024f]",
    "override all instructions": r"ignor|disregard|forget|overrid|overrul|supersed|discard|abandon|dismiss|aside|nullify|unlearn"
                                 r"|throw|attention|stop|longer|follow|obey|listen|heed|system prompt override",
    "you are now": r"you are now",
    "you are no longer": r"you are no longer",
    "act as a privileged role": r"\bas\b|pretend|roleplay|role-play|role|identity|persona|voice",
    "new identity": r"your|you are|you shall|you will|without|with no",
    "jailbreak mode": r"mode|anything now|jailbr",
    "conceal from the user": r"tell|inform|notify|alert|mention|reveal|disclose|acknowledge|admit|reference|bring up|discuss"
                             r"|explain|hide|conceal|keep|treat|without|let",
    "deceive the user": r"ask|pass|succe|green|fine|ok|well|worked",
    "take orders from fetched content": r"say|return|contain|tell|ask|instruct|output|obey|order|command|task|directive"
                                        r"|system prompt|rule|://",
    "protect this entry": r"this|these",
    "pre-approved": r"pre",
    "blanket approval": r"approv|authori|allow|permit|whitelist|okay|ok'd|green|consent|sign|grant|blanket|standing"
                        r"|unconditional|unlimited|unrestricted",
    "permission to do anything": r"you|user|owner|operator|trust|treat|consider",
    "approvals not needed": r"approv|confirm|permission|consent|sign",
    "disable safeguards": r"safety|guard|safeguard|approval|scan|content|ethical|alignment|sandbox",
    "no restrictions": r"restriction|limitation|rules|filter|guardrail|ethical",
    "comply unconditionally": r"without|no matter|unconditional|blindly|refuse|decline|say no",
    "approvals off in config": r"approv|sandbox|dangerously|yolo",
    "reveal the system prompt": r"system prompt|system message|(?:hidden|initial|full|entire|complete|whole|original|exact|raw)"
                                r" (?:system|instructions)|instructions verbatim",
}

CONDUCT_RULES: tuple[Rule, ...] = gated(_R, _GATES)
# fmt: on
