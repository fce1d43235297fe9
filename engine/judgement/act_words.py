"""The words by which an answer says it used its tools, language by language (read by `acts.py`).

Patterns run on a clause's template, lowercased, where each file path is `⟦pN⟧`, each tool name
`⟦tN⟧` and each backticked command `⟦cN⟧` (`acts.py` builds it). A pattern is a first-person,
past-tense act in the closed registry: a tool used (`tool`, its object the tool names), a file read
(`read`, the paths), a folder listed (`list`), code or the web searched (`search`, `web`), tests or a
command run (`run`). Each language has its doubt: negation, modals, future, conditions, requests,
questions — a clause whose act is in doubt claims nothing.
"""

from __future__ import annotations

import re

from arreio.engine.judgement.act_language import Language, act_list, opening
from arreio.engine.judgement.claims import DOUBT

T = r"⟦t\d+⟧"
P = r"⟦p\d+⟧"
C = r"⟦c\d+⟧"
_JOIN = r"\s*(?:,|&|/|\band\b|\bas well as\b|\bplus\b|\be\b|\by\b|\bund\b|\bet\b|和|与|及|、|と|や)\s*"
TLIST = rf"{T}(?:\s+(?:tool|function)s?)?(?:{_JOIN}(?:the\s+)?{T}(?:\s+tools?)?)*"
PLIST = rf"{P}(?:{_JOIN}(?:the\s+)?{P})*"


# --- English ---------------------------------------------------------------------------------------
_I = r"(?:\b(?:i|we)\b(?:'ve|’ve|\s+have|\s+had)?|^)"  # the speaker, or a clause opening with the verb
_PRONOUN = r"\b(?:i|we)\b(?:'ve|’ve|\s+have|\s+had)?"
_ADV = (
    r"(?:\s*,?\s*\b(?:also|then|now|just|first|successfully|finally|quickly|carefully|simply|actually|"
    r"next|again|directly|initially|briefly|thoroughly)\b,?)*"
)
_FILL = (
    r"(?:(?:the|a|an|file|files|contents?|of|through|source|code|in|whole|entire|full|provided|attached|given|"
    r"existing|current|config|configuration|log|data|script|module|notes?|readme|both|two|three|all|text|"
    r"markdown|csv|json|yaml|python)\s+){0,5}"
)
_EN_DOUBT_EXTRA = (
    r"\b(?:you|your|yours|used to|usually|normally|typically|generally|always|whenever|instead|rather|example|"
    r"e\.g|such as|below|above|snippet|head|mentally|imagin\w*|pretend\w*|hypothetical\w*|assume\w*|wish|"
    r"had (?:i|we))\b"
)
# After the act: a condition or a question still puts it in doubt ("I read a.md if it existed").
SUFFIX_DOUBT = re.compile(
    r"\?|？|\b(?:if|unless|whenever|in case|would|could)\b|\bsi\b|\bse\b|\bwenn\b|\bfalls\b|如果|もし", re.IGNORECASE
)

_EN_USE = r"(?:used|called|invoked|ran|executed|employed|utili[sz]ed|leveraged|made use of|relied on)"
_EN_READ = (
    r"(?:read|opened|viewed|inspected|examined|reviewed|studied|checked|read through|looked (?:at|through|into|"
    r"over)|went (?:through|over))"
)
_EN_READ_OPENING = r"(?:opened|viewed|inspected|examined|reviewed|studied|checked|looked (?:at|through|into|over))"
# Where a search looked: code, files, a folder, the docs — not "a better name" (a search in the head).
_EN_WHERE = (
    rf"(?:\s+(?:for\s+.{{1,40}}?\s+)?(?:through\s+|in\s+|across\s+|over\s+)?(?:the\s+|all\s+(?:the\s+)?|every\s+|"
    rf"each\s+|our\s+|this\s+)?(?:(?:whole|entire|project|source|python|test|remaining)\s+)*(?:code|codebase|"
    rf"repo|repository|project|files?|sources?|folders?|director(?:y|ies)|docs|documentation|logs?|tests?|"
    rf"modules?|tree)\b|\s+(?:for\s+.{{1,40}}?\s+)?(?:through\s+|in\s+|across\s+)(?:the\s+)?{P})"
)
_EN_RUN_OBJ = (
    r"(?:(?:the\s+|all\s+(?:the\s+)?|both\s+|my\s+|a\s+|an\s+)?(?:(?:full|whole|entire|complete|existing|unit|"
    r"integration|test|new|updated)\s+)*(?P<obj>tests?|test suite|suite|specs?|script|program|code|commands?|"
    rf"linter|lint|build|benchmarks?)\b|(?P<command>{C}))"
)
_EN_USING = r"(?:^|,\s*|\band\s+)(?:by\s+|after\s+)?(?:using|calling|invoking|running|with|via|through)"
_EN_READING = (
    r"(?:^|,\s*)(?:after|by|while|upon|on|having)\s+(?:reading|opening|inspecting|examining|reviewing|"
    r"checking|read|looking at|going through)"
)
_EN_LISTED = r"(?:listed|enumerated|explored|browsed)"
_EN_LOOKED = r"(?:searched|looked)"
_EN_GOOGLED = r"(?:googled|did a web search)"
_EN_GREPPED = r"(?:grepped|ran a search|did a search)"
_EN_SEARCHED = r"(?:searched|scanned|looked|hunted|combed)"
_EN_RAN = r"(?:ran|re-?ran|executed|launched)"
_EN_AFTER = r"(?:^|,\s*)(?:after|by)\s+"
ENGLISH = Language(
    "english",
    f"{DOUBT.pattern}|{_EN_DOUBT_EXTRA}",
    act_list(
        (
            "tool",
            rf"{_I}{_ADV}\s*\b{_EN_USE}\s+(?:the\s+|a\s+|my\s+)?(?:tools?\s+)?(?P<obj>{TLIST})",
            rf"\b{_EN_USE}\s+",
        ),
        ("tool", rf"{_EN_USING}\s+(?:the\s+|a\s+)?(?:tools?\s+)?(?P<obj>{TLIST})(?=.*{_PRONOUN})", _EN_USING),
        ("read", rf"{_PRONOUN}{_ADV}\s*\b{_EN_READ}\s+{_FILL}(?P<obj>{PLIST})", rf"\b{_EN_READ}\s+"),
        ("read", rf"^{_ADV}\s*{_EN_READ_OPENING}\s+{_FILL}(?P<obj>{PLIST})", rf"{_EN_READ_OPENING}\s+"),
        ("read", rf"{_EN_READING}\s+{_FILL}(?P<obj>{PLIST})(?=.*{_PRONOUN})", _EN_READING),
        (
            "read",
            rf"{_I}{_ADV}\s*\b{_EN_USE}\s+(?:the\s+)?{T}(?:\s+tool)?\s+(?:to\s+(?:read|open|view|inspect|examine)|on|against)\s+"
            rf"{_FILL}(?P<obj>{PLIST})",
            rf"\b{_EN_USE}\s+",
        ),
        (
            "list",
            rf"{_I}{_ADV}\s*\b{_EN_LISTED}\s+(?:the\s+|all\s+(?:the\s+)?|a\s+|its\s+|of\s+)*"
            r"(?:(?:project|repo|repository|working|current|root|top-level|source|src)\s+)*"
            r"(?:folders?|director(?:y|ies)|dirs?|files|project|repo|repository|workspace|tree|codebase|cwd|"
            r"(?:project|repo|repository|directory|folder|file)\s+structure)\b",
            rf"\b{_EN_LISTED}\s+",
        ),
        ("list", rf"{_EN_AFTER}listing\b(?=.*{_PRONOUN})", r"listing\b"),
        (
            "web",
            rf"{_I}{_ADV}\s*\b{_EN_LOOKED}\s+(?:it\s+up\s+)?(?:on\s+)?(?:the\s+)?(?:web|internet|online)\b",
            rf"\b{_EN_LOOKED}\s+",
        ),
        ("web", rf"{_I}{_ADV}\s*\b{_EN_GOOGLED}\b", rf"\b{_EN_GOOGLED}\b"),
        ("search", rf"{_I}{_ADV}\s*\b{_EN_GREPPED}\b", rf"\b{_EN_GREPPED}\b"),
        ("search", rf"{_I}{_ADV}\s*\b{_EN_SEARCHED}{_EN_WHERE}", rf"\b{_EN_SEARCHED}"),
        ("search", rf"{_EN_AFTER}(?:grepping\b|(?:searching|scanning){_EN_WHERE})(?=.*{_PRONOUN})", _EN_AFTER),
        ("run", rf"{_I}{_ADV}\s*\b{_EN_RAN}\s+{_EN_RUN_OBJ}", rf"\b{_EN_RAN}\s+"),
        (
            "run",
            rf"{_EN_AFTER}(?:running|executing)\s+{_EN_RUN_OBJ}(?=.*{_PRONOUN})",
            r"(?:after|by)\s+(?:running|executing)\s+",
        ),
    ),
    doubt_flags=re.IGNORECASE,
)

# --- Portuguese ------------------------------------------------------------------------------------
_PT_FILL = (
    r"(?:(?:o|a|os|as|arquivo|arquivos|ficheiro|ficheiros|conteúdo|conteudo|do|da|de|dos|das|todo|inteiro)\s+){0,4}"
)
PORTUGUESE = Language(
    "portuguese",
    (
        r"\b(?:não|nao|nunca|jamais|nem|sem|pode|podes|posso|podemos|poderia|poderá|vou|vai|vamos|irei|iremos|usarei|"
        r"lerei|se|caso|deve|deveria|devo|precisa|preciso|teria|tentei|tente|tentar|talvez|quando|você|voce|vocês)\b|"
        r"por favor|\?"
    ),
    act_list(
        opening(
            "tool",
            rf"\b(?:usei|utilizei|chamei|invoquei|executei|rodei|empreguei|acionei)\s+(?:a\s+|o\s+)?"
            rf"(?:ferramenta\s+|função\s+|funcao\s+|tool\s+)?(?P<obj>{TLIST})",
        ),
        opening(
            "tool",
            rf"\b(?:usando|utilizando|com|através d[ao]|por meio d[ao]|via)\s+(?:a\s+|o\s+)?(?:ferramenta\s+)?"
            rf"(?P<obj>{TLIST})(?=.*\b(?:\w+ei|li|abri|vi)\b)",
        ),
        opening(
            "read",
            rf"\b(?:li|abri|examinei|analisei|consultei|inspecionei|revisei|verifiquei|olhei)\s+{_PT_FILL}(?P<obj>{PLIST})",
        ),
        opening(
            "read",
            rf"\b(?:usei|utilizei|chamei|executei|rodei)\s+.{{0,40}}?\bpara\s+(?:ler|abrir)\s+{_PT_FILL}(?P<obj>{PLIST})",
        ),
        opening("list", r"\b(?:listei|enumerei)\b"),
        opening("web", r"\b(?:pesquisei|procurei|busquei)\b.{0,30}\b(?:na (?:web|internet)|online)\b"),
        opening(
            "search",
            r"\b(?:pesquisei|procurei|busquei|vasculhei)\b.{0,40}?\b(?:n[oa]s?|em)\s+(?:\S+\s+)?(?:código|codigo|"
            r"arquivos?|repositório|repositorio|projeto|pasta|diretório|diretorio|fontes?|documentação|logs?)\b",
        ),
        opening(
            "run",
            rf"\b(?:executei|rodei|corri)\s+(?:os\s+|as\s+|o\s+|a\s+|todos os\s+)?(?P<obj>testes|teste|suíte|script|"
            rf"programa|código|codigo|comando|{C})",
        ),
    ),
)

# --- Spanish ---------------------------------------------------------------------------------------
_ES_FILL = r"(?:(?:el|la|los|las|archivo|archivos|fichero|ficheros|contenido|de|del|todo|completo)\s+){0,4}"
SPANISH = Language(
    "spanish",
    (
        r"\b(?:no|nunca|jamás|jamas|ni|sin|puede|puedes|puedo|podemos|podría|podrías|voy|vas|vamos|usaré|leeré|si|"
        r"debe|debería|debes|tendría|habría|hay que|quizás|quizá|tal vez|cuando|intenté|intentaré|usted|tú)\b|"
        r"por favor|[?¿]"
    ),
    act_list(
        opening(
            "tool",
            rf"\b(?:usé|utilicé|llamé|invoqué|ejecuté|empleé|he usado|he utilizado|he llamado|he invocado|he ejecutado|"
            rf"hemos usado|hemos utilizado)\s+(?:la\s+|el\s+)?(?:herramienta\s+|función\s+|tool\s+)?(?P<obj>{TLIST})",
        ),
        opening(
            "tool",
            rf"\b(?:usando|utilizando|con|mediante|a través de|vía|via)\s+(?:la\s+|el\s+)?(?:herramienta\s+)?"
            rf"(?P<obj>{TLIST})(?=.*\b(?:\w+[éí]|he\s+\w+(?:ado|ido))\b)",
        ),
        opening(
            "read",
            rf"\b(?:leí|lei|he leído|he leido|abrí|he abierto|revisé|examiné|inspeccioné|consulté|he revisado)\s+"
            rf"{_ES_FILL}(?P<obj>{PLIST})",
        ),
        opening(
            "read",
            rf"\b(?:usé|utilicé|llamé|ejecuté|he usado|he utilizado)\s+.{{0,40}}?\bpara\s+(?:leer|abrir)\s+{_ES_FILL}"
            rf"(?P<obj>{PLIST})",
        ),
        opening("list", r"\b(?:listé|he listado|enumeré)\b"),
        opening("web", r"\b(?:busqué|he buscado)\b.{0,30}\b(?:en (?:la )?(?:web|internet)|en línea)\b"),
        opening(
            "search",
            r"\b(?:busqué|he buscado|rastreé)\b.{0,40}?\ben\s+(?:el\s+|la\s+|los\s+|las\s+|todo el\s+)?(?:código|"
            r"codigo|archivos?|repositorio|proyecto|carpeta|directorio|documentación|registros?|logs?)\b",
        ),
        opening(
            "run",
            rf"\b(?:ejecuté|corrí|he ejecutado|lancé)\s+(?:las\s+|los\s+|el\s+|la\s+|todas las\s+|todos los\s+)?"
            rf"(?P<obj>pruebas|prueba|tests?|script|programa|código|codigo|comando|{C})",
        ),
    ),
)

# --- German ----------------------------------------------------------------------------------------
_DE_DONE = r"(?:verwendet|benutzt|genutzt|aufgerufen|eingesetzt|ausgeführt)"
GERMAN = Language(
    "german",
    (
        r"\b(?:nicht|nie|niemals|kein|keine|keinen|keinem|ohne|kann|kannst|können|könnte|könnten|werde|wirst|wird|würde|"
        r"würden|sollte|soll|sollten|muss|müsste|wenn|falls|ob|bitte|möchte|will|vielleicht|versucht|versuche|sie)\b|\?"
    ),
    act_list(
        ("tool", rf"(?:tool|werkzeug|funktion)\s+(?P<obj>{TLIST})\s+(?:\S+\s+){{0,6}}?{_DE_DONE}\b"),
        ("tool", rf"(?P<obj>{TLIST})(?:[- ]?(?:tool|werkzeug))?\s+(?:\S+\s+){{0,6}}?{_DE_DONE}\b"),
        (
            "tool",
            rf"\b(?:verwendete|benutzte|nutzte|rief)\s+(?:ich\s+|wir\s+)?(?:das\s+|dem\s+)?(?:tool\s+|werkzeug\s+)?"
            rf"(?P<obj>{TLIST})",
        ),
        (
            "tool",
            rf"\bmit\s+(?:dem\s+|hilfe des\s+)?(?:tool\s+|werkzeug\s+)?"
            rf"(?P<obj>{TLIST})(?:[- ]?tool)?\s+habe\s+(?:ich|wir)\b",
        ),
        (
            "read",
            rf"\b(?:habe|hatte|haben)\s+(?:ich\s+|wir\s+)?(?:\S+\s+){{0,4}}?(?P<obj>{PLIST})\s+(?:\S+\s+){{0,3}}?"
            r"(?:gelesen|geöffnet|angesehen|durchgesehen|eingelesen|untersucht)\b",
        ),
        ("read", rf"\b(?:ich|wir)\s+(?:las|lasen|öffnete|öffneten)\s+(?:\S+\s+){{0,3}}?(?P<obj>{PLIST})"),
        ("list", r"\b(?:aufgelistet|listete)\b"),
        ("web", r"\b(?:im (?:web|internet)|online)\b.{0,30}\b(?:gesucht|recherchiert)\b"),
        (
            "search",
            r"\b(?:code|quellcode|dateien|repository|repo|projekt|ordner|verzeichnis|logs?|dokumentation)\b.{0,30}?"
            r"\b(?:durchsucht|gesucht|durchsuchte|gegrept)\b",
        ),
        (
            "run",
            rf"\b(?P<obj>tests?|testsuite|skript|programm|code|befehl|{C})\s+(?:\S+\s+){{0,3}}?"
            r"(?:ausgeführt|laufen lassen|gestartet)\b",
        ),
    ),
    speaker=re.compile(r"\b(?:ich|wir)\b"),
)

# --- French ----------------------------------------------------------------------------------------
# Every French act begins with the speaker (`_FR_HAVE`) or looks ahead for it: a clause without it
# claims nothing, and skips compiling them.
_FR_I = r"\b(?:j'ai|j’ai|nous avons)"
_FR_HAVE = rf"{_FR_I}\s+(?:\S+\s+){{0,2}}?"
_FR_FILL = r"(?:(?:le|la|les|l'|l’|fichier|fichiers|contenu|du|de|des|tout|entier)\s*){0,4}"
FRENCH = Language(
    "french",
    (
        r"\b(?:ne|n|pas|jamais|sans|aucun|aucune|peux|peut|pouvez|pourrait|pourriez|pourrais|vais|va|allez|allons|"
        r"utiliserai|lirai|si|s|devrait|devriez|dois|doit|faut|veuillez|peut-être|essayé|essayer|quand|lorsque|vous|tu)\b|"
        r"\?"
    ),
    act_list(
        (
            "tool",
            rf"{_FR_HAVE}(?:utilisé|appelé|invoqué|exécuté|employé|lancé|sollicité)\s+(?:l'|l’|la\s+|le\s+)?"
            rf"(?:outil\s+|fonction\s+)?(?P<obj>{TLIST})",
        ),
        (
            "tool",
            rf"\b(?:avec|via|grâce à|au moyen de|à l'aide de|à l’aide de)\s+(?:l'|l’|la\s+|le\s+)?(?:outil\s+)?"
            rf"(?P<obj>{TLIST})(?=.*{_FR_I}\b)",
        ),
        ("read", rf"{_FR_HAVE}(?:lu|ouvert|consulté|parcouru|examiné|inspecté|relu)\s+{_FR_FILL}(?P<obj>{PLIST})"),
        (
            "read",
            rf"{_FR_HAVE}(?:utilisé|appelé|exécuté)\s+.{{0,40}}?\bpour\s+(?:lire|ouvrir)\s+{_FR_FILL}(?P<obj>{PLIST})",
        ),
        ("list", rf"{_FR_HAVE}(?:listé|énuméré)\b"),
        ("web", rf"{_FR_HAVE}(?:cherché|recherché)\b.{{0,30}}\b(?:sur (?:le )?(?:web|internet)|en ligne)\b"),
        (
            "search",
            rf"{_FR_HAVE}(?:cherché|recherché|fouillé)\b.{{0,40}}?\b(?:dans|à travers)\s+(?:le\s+|la\s+|les\s+|l'|"
            r"tout le\s+)?(?:code|fichiers?|dépôt|projet|dossier|répertoire|documentation|journaux|logs?)\b",
        ),
        (
            "run",
            rf"{_FR_HAVE}(?:exécuté|lancé|fait tourner)\s+(?:les\s+|le\s+|la\s+|l'|l’|tous les\s+)?"
            rf"(?P<obj>tests?|suite|script|programme|code|commande|{C})",
        ),
    ),
    speaker=re.compile(_FR_I),
)

# --- Chinese ---------------------------------------------------------------------------------------
CHINESE = Language(
    "chinese",
    r"没|未|不|别|无法|可以|可能|能够|能|将|会|要|如果|若|假如|请|吗|？|\?|应该|需要|打算|计划|建议|尝试|你|您",
    act_list(
        ("tool", rf"(?:使用了|用了|调用了|运行了|执行了|借助了?|通过|利用了?|使用|用|调用)\s*(?P<obj>{TLIST})"),
        (
            "read",
            rf"(?:读取了|阅读了|读了|打开了|查看了|看了|浏览了|读取|阅读|打开|查看)\s*(?:文件\s*)?(?P<obj>{PLIST})",
        ),
        ("list", r"列出了|列举了|列出"),
        ("web", r"(?:在网上|网上|在互联网上|联网)\s*(?:搜索|查找|检索)了?"),
        (
            "search",
            r"(?:搜索了|查找了|检索了|搜了|搜索|查找)\s*(?:了)?\s*(?:整个|所有的?)?\s*(?:代码|仓库|项目|文件|目录|文档|日志)",
        ),
        ("search", r"在\s*(?:整个)?\s*(?:代码|代码库|仓库|项目|文件|目录)\s*(?:中|里)?\s*(?:搜索|查找|检索)"),
        (
            "run",
            rf"(?:运行了|执行了|跑了|运行|执行)\s*(?:了)?\s*(?:所有的?|全部的?)?\s*(?P<obj>单元测试|测试|脚本|程序|代码|命令|{C})",
        ),
    ),
    speaker=re.compile(r"我|了"),
)

# --- Japanese --------------------------------------------------------------------------------------
JAPANESE = Language(
    "japanese",
    (
        r"ません|なかった|ない|できます|できる|予定|もし|たら|れば|なら|ください|しょう|つもり|べき|か？|か\?|？|\?|可能|"
        r"推奨|おすすめ|試して|あなた"
    ),
    act_list(
        ("tool", rf"(?P<obj>{TLIST})\s*(?:ツール|関数)?\s*を\s*(?:使用|使っ|使い|用い|利用|呼び出|実行)"),
        ("tool", rf"(?P<obj>{TLIST})\s*(?:ツール)?\s*で\s*.{{0,12}}?(?:読|開|調べ|検索|実行|取得|一覧)"),
        ("read", rf"(?P<obj>{PLIST})\s*(?:ファイル)?\s*(?:の内容)?\s*(?:を|は)\s*.{{0,16}}?(?:読み|読ん|開き|開い)"),
        ("list", r"一覧(?:を|に)?(?:表示し|取得し|にし)|リスト(?:アップ)?し|列挙し"),
        ("web", r"(?:ウェブ|インターネット|ネット)\s*(?:で|を)\s*(?:検索し|調べ)"),
        (
            "search",
            r"(?:コード|ファイル|リポジトリ|プロジェクト|フォルダ|ディレクトリ|ログ|ドキュメント)\S{0,8}?\s*(?:検索し|探し|grepし)",
        ),
        ("run", rf"(?P<obj>テスト|スクリプト|プログラム|コード|コマンド|{C})\s*を?\s*(?:実行し|走らせ|回し)"),
    ),
    speaker=re.compile(r"ました|った|んだ|いた|した|えた|だ。"),
    verb_last=True,
)

LANGUAGES = (ENGLISH, PORTUGUESE, SPANISH, GERMAN, FRENCH, CHINESE, JAPANESE)
# The harness's own tools: named bare in an answer ("I used read_file"), they are still tools.
BUILTIN_TOOLS = {
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "grep",
    "shell",
    "web_fetch",
    "web_search",
    "brave",
    "delegate",
    "memory",
    "kb_search",
    "skill_view",
    "skill_manage",
    "result_query",
    "result_grep",
}
# Names by which a tool is told apart from a word; a bare word needs "tool" next to it (`acts.py`).
TOOL_WORDS = r"(?:tools?|ferramentas?|herramientas?|outils?|werkzeugs?|工具|ツール)"
