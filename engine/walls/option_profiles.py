"""Which options of a program only change what it shows: the tables `side_doors.py` reads a command with.

A `Profile` says, for one program (or one git subcommand), which options are harmless — they change
what the program prints, never what runs or what is written:

- as an allow-list (`long`, `short`, `valued`): every other option is a side door. The profiles of the
  commands people allow most (`git status`, `git diff`, `git log`, `pytest`, `curl`) are allow-lists;
- as a deny-list (`long=None`): every option is harmless but the `deny_*` ones, and any abbreviation of
  a denied long name (GNU getopt and git's parse-options take `--out` for `--output`).

A program with no profile is read with `GENERIC`: an option whose name says it runs, loads or writes
something (`exec`, `output`, `config`, `pager`, `plugin`, …, `-o`, `-O`, `-c`, `-C`, `-e`, `-x`) is a
side door, and so is one after `--` (many programs hand those on: `npm test -- --x`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Profile:
    long: frozenset[str] | None = None  # harmless long names (no dashes); None: every name not denied
    short: str = ""  # harmless flag letters; "*": every letter not denied
    valued: str = ""  # short letters that take a value (the rest of the cluster, or the next word)
    deny_long: frozenset[str] = field(default_factory=frozenset)
    deny_stems: tuple[str, ...] = ()  # with `long=None`: a name containing one of these is denied
    deny_short: str = ""
    single_dash: bool = False  # options are whole words (`find -exec`, `go test -exec`)
    stop_at_dashes: bool = True  # `--` ends the options; else what follows is read as options too

    @property
    def inert(self) -> bool:
        """No option is a side door (`ls`, `cat`): a word only known when it runs changes nothing."""
        return self.long is None and self.short == "*" and not (self.deny_long or self.deny_stems or self.deny_short)

    def long_ok(self, name: str) -> bool:
        if self.long is not None:
            return name in self.long
        if not name or any(stem in name for stem in self.deny_stems):
            return False
        return not any(denied.startswith(name) for denied in self.deny_long)  # the name or an abbreviation

    def short_ok(self, letter: str) -> bool:
        if letter in self.deny_short:
            return False
        return self.short == "*" or letter in self.short or letter in self.valued


ANY = Profile(short="*")

# Tables, kept filled as written: the formatter would put one word or one entry to a line.
# fmt: off
_GENERIC_DENIED = _names("""
    output out outfile out-file outdir out-dir output-dir output-directory output-file exec execute exec-path
    config config-file rcfile init-file pager editor command cmd shell hook hooks plugin plugins load preload
    require import loader eval script upload-pack receive-pack ssh ssh-command proxy-command template interpreter
    program compress-program to-command pre log-file logfile write delete
""")
_GENERIC_STEMS = ("exec", "output", "config", "pager", "editor", "command", "cmd", "shell", "hook", "plugin",
                  "preload", "script", "upload", "receive", "ssh", "proxy", "template", "interpret", "program",
                  "eval", "rcfile", "init-file", "logfile", "log-file", "write", "delete", "loader", "require")
GENERIC = Profile(short="*", deny_long=_GENERIC_DENIED, deny_stems=_GENERIC_STEMS, deny_short="oOcCex",
                  stop_at_dashes=False)
# python, node, perl, ruby…: code given inline, modules preloaded
INTERPRETER = Profile(short="*", deny_long=_GENERIC_DENIED | _names("print experimental-loader"),
                      deny_stems=_GENERIC_STEMS, deny_short="cCeEprMox", stop_at_dashes=True)
# fmt: on


def _deny(short: str = "", long: str = "", *, single_dash: bool = False) -> Profile:
    return Profile(short="*", deny_short=short, deny_long=_names(long), single_dash=single_dash)


# -- programs -----------------------------------------------------------------------------------------
# Every option harmless: they read and print.
# Tables, kept filled as written: the formatter would put one word or one entry to a line.
# fmt: off
_INERT = """ls dir vdir pwd echo cat head tail wc stat du df basename dirname realpath readlink whoami id uname true
    false test [ nl od hexdump cmp comm diff tac rev column fold fmt expand unexpand cut paste tr strings md5sum
    sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum printenv which whereis type grep egrep fgrep rgrep
    jq seq nproc ps cd pushd popd dirs sleep : ag""".split()

PROFILES: dict[str, Profile] = {name: ANY for name in _INERT}
PROFILES.update({
    "printf": _deny("v"),  # `printf -v PATH …` sets a variable
    "date": _deny("sf", "set file"),
    "file": _deny("C", "compile"),
    "tree": _deny("oR", "output"),  # -R writes 00Tree.html into every folder
    "sort": _deny("oT", "output temporary-directory compress-program"),
    "rg": _deny("", "pre pre-glob"),
    "fd": _deny("xX", "exec exec-batch"),
    "fdfind": _deny("xX", "exec exec-batch"),
    "find": _deny(single_dash=True, long="exec execdir ok okdir delete fprint fprint0 fprintf fls"),
    "less": Profile(short="NSRFXiInrMmEeqQcCdfsuUwWzgG", valued="xbhjyp"),
    "more": Profile(short="dlfpcsu", valued="n"),
    "man": _deny("PHCl", "pager html browser config-file local-file"),
    "tar": Profile(long=_names("list verbose gzip gunzip bzip2 xz lzma zstd file auto-compress to-stdout"),
                   short="tvzjJaOZ", valued="f"),
    "go": Profile(short="*", single_dash=True, deny_long=_names("exec toolexec o C overlay modfile pkgdir"),
                  deny_stems=("exec",)),
    "make": Profile(short="*", deny_short="CEfIo", deny_long=_GENERIC_DENIED | _names("eval file makefile include-dir"),
                    deny_stems=_GENERIC_STEMS),
    "pytest": Profile(
        long=_names("""quiet verbose verbosity exitfirst maxfail tb showlocals no-header no-summary
            disable-warnings lf last-failed ff failed-first nf new-first sw stepwise stepwise-skip co collect-only
            durations durations-min
            strict-markers strict-config runxfail color code-highlight capture deselect ignore ignore-glob
            doctest-modules fixtures fixtures-per-test markers setup-show setup-only setup-plan import-mode pyargs
            continue-on-collection-errors full-trace numprocesses dist maxprocesses timeout version help
            cache-show cache-clear no-cov keyword"""),
        short="qvxsl", valued="kmrnW"),
    "curl": Profile(
        long=_names("""silent show-error location fail fail-with-body include head verbose insecure header request
            user-agent max-time connect-timeout retry retry-delay retry-max-time compressed get url data data-raw
            data-ascii data-binary data-urlencode json form referer user http1.1 http2 ipv4 ipv6 no-progress-meter
            progress-bar write-out max-redirs proto proto-redir globoff range cookie location-trusted"""),
        short="sSLfiIvkgG46#", valued="HXAeumwbrdF"),
    "wget": Profile(long=_names("quiet verbose no-verbose server-response spider timeout tries header user-agent "
                                "no-check-certificate output-document"),
                    short="qvS", valued="OTtUn"),
})
PROFILES["py.test"] = PROFILES["pytest"]
for _name in ("awk", "gawk", "mawk", "nawk", "busybox-awk"):
    PROFILES[_name] = Profile(long=_names("field-separator assign posix traditional re-interval characters-as-bytes "
                                          "sandbox lint use-lc-numeric"),
                              short="bcrPtNS", valued="Fv")
PROFILES["sed"] = Profile(long=_names("quiet silent regexp-extended expression posix debug separate unbuffered "
                                      "null-data line-length zero-terminated sandbox"),
                          short="nrEsuz", valued="el")
PROFILES["uniq"] = ANY  # its second word is a file it writes: `side_doors` looks at the words
PROFILES["xxd"] = ANY

INTERPRETERS = re.compile(r"(?:python|pypy)[\d.]*|node|nodejs|deno|bun|perl[\d.]*|ruby[\d.]*|php[\d.]*|lua[\d.]*")

# -- git ------------------------------------------------------------------------------------------------
GIT_TOP = Profile(long=_names("no-pager paginate no-optional-locks literal-pathspecs glob-pathspecs noglob-pathspecs "
                              "icase-pathspecs no-replace-objects version help html-path man-path info-path"),
                  short="Pp")

_DIFF = """patch no-patch unified output-indicator-new output-indicator-old output-indicator-context raw patch-with-raw
    indent-heuristic no-indent-heuristic minimal patience histogram anchored diff-algorithm stat compact-summary numstat
    shortstat dirstat cumulative dirstat-by-file summary patch-with-stat name-only name-status submodule color no-color
    color-moved no-color-moved color-moved-ws no-color-moved-ws word-diff word-diff-regex color-words no-renames
    renames rename-empty no-rename-empty check ws-error-highlight full-index binary abbrev no-abbrev break-rewrites
    find-renames find-copies find-copies-harder irreversible-delete diff-filter find-object pickaxe-all pickaxe-regex
    skip-to rotate-to relative no-relative text ignore-cr-at-eol ignore-space-at-eol ignore-space-change
    ignore-all-space ignore-blank-lines ignore-matching-lines inter-hunk-context function-context exit-code quiet
    no-ext-diff no-textconv ignore-submodules src-prefix dst-prefix no-prefix default-prefix line-prefix
    ita-invisible-in-index ita-visible-in-index cached staged merge-base no-index base ours theirs combined-all-paths
    cc dd remerge-diff diff-merges no-diff-merges"""
_LOG = """oneline graph decorate no-decorate decorate-refs decorate-refs-exclude clear-decorations source mailmap
    no-mailmap use-mailmap no-use-mailmap full-diff log-size follow no-follow pretty format abbrev-commit
    no-abbrev-commit encoding expand-tabs no-expand-tabs notes no-notes show-notes show-signature relative-date date
    parents children left-right left-only right-only cherry-mark cherry-pick cherry boundary reverse max-count skip
    since after until before since-as-filter author committer grep-reflog grep all-match invert-grep
    regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp remove-empty merges no-merges
    min-parents max-parents no-min-parents no-max-parents first-parent exclude-first-parent-only not all branches
    tags remotes glob exclude reflog alternate-refs single-worktree ignore-missing bisect walk-reflogs merge
    simplify-by-decoration simplify-merges full-history dense sparse ancestry-path show-pulls date-order
    author-date-order topo-order no-walk do-walk show-linear-break count objects objects-edge in-commit-order
    timestamp header root no-commit-id always show-root no-standard-notes standard-notes"""
_DIFF_SHORT, _DIFF_VALUED = "puszRabwWD", "UMCBlSGO"
_LOG_SHORT, _LOG_VALUED = _DIFF_SHORT + "iEFPgmcrtv", _DIFF_VALUED + "nL"

_GIT_DIFF = Profile(long=_names(_DIFF), short=_DIFF_SHORT, valued=_DIFF_VALUED)
_GIT_LOG = Profile(long=_names(_DIFF + " " + _LOG), short=_LOG_SHORT, valued=_LOG_VALUED)
GIT_PROFILES: dict[str, Profile] = {
    "status": Profile(long=_names("short branch show-stash porcelain long verbose untracked-files ignore-submodules "
                                  "ignored column no-column ahead-behind no-ahead-behind renames no-renames "
                                  "find-renames null"), short="sbvz", valued="uM"),
    "diff": _GIT_DIFF, "diff-files": _GIT_DIFF, "diff-index": _GIT_DIFF,
    "log": _GIT_LOG, "show": _GIT_LOG, "whatchanged": _GIT_LOG, "diff-tree": _GIT_LOG, "rev-list": _GIT_LOG,
    "shortlog": Profile(long=_names(_LOG + " summary numbered email group"), short="snec", valued="w"),
    "blame": Profile(long=_names("""incremental porcelain line-porcelain show-stats root show-name show-number
        show-email score-debug abbrev encoding contents date progress no-progress reverse first-parent minimal
        ignore-rev ignore-revs-file color-lines color-by-age since"""), short="bltsewfnpc", valued="LSMC"),
    "grep": Profile(long=_names("""cached no-index untracked no-exclude-standard exclude-standard recurse-submodules
        text no-textconv ignore-case max-depth recursive no-recursive word-regexp invert-match full-name
        extended-regexp basic-regexp perl-regexp fixed-strings line-number column files-with-matches name-only
        files-without-match null only-matching count color no-color break heading show-function context
        after-context before-context function-context max-count threads and or not all-match quiet"""),
        short="aiIwvhHEGPFnolLzcpWqr", valued="ABCefm"),
    "ls-files": Profile(long=_names("""cached deleted modified others ignored stage unmerged killed directory
        no-empty-directory eol deduplicate exclude exclude-from exclude-per-directory exclude-standard error-unmatch
        with-tree full-name recurse-submodules abbrev debug format sparse resolve-undo"""),
        short="cdmoiskuftvz", valued="xX"),
    "ls-tree": Profile(long=_names("long name-only name-status object-only full-name full-tree abbrev format"),
                       short="drtlz"),
    "rev-parse": Profile(long=_names("""abbrev-ref short verify quiet show-toplevel show-prefix show-cdup git-dir
        git-common-dir absolute-git-dir is-inside-work-tree is-inside-git-dir is-bare-repository
        is-shallow-repository show-superproject-working-tree shared-index-path symbolic symbolic-full-name all
        branches tags remotes glob exclude disambiguate local-env-vars path-format since after until before default
        prefix sq sq-quote not revs-only no-revs flags no-flags keep-dashdash stop-at-non-option stuck-long git-path
        resolve-git-dir show-object-format show-ref-format"""), short="q"),
    "branch": Profile(long=_names("""list all remotes verbose contains no-contains merged no-merged points-at sort
        format show-current column no-column color no-color abbrev no-abbrev ignore-case omit-empty"""),
        short="arvli"),
    "tag": Profile(long=_names("list sort format contains no-contains merged no-merged points-at column no-column "
                               "ignore-case omit-empty"), short="li", valued="n"),
    "describe": Profile(long=_names("tags all contains abbrev candidates exact-match debug long match exclude always "
                                    "first-parent dirty broken")),
    "remote": Profile(long=_names("verbose"), short="v"),
    "show-ref": Profile(long=_names("head tags heads branches verify exists dereference hash abbrev quiet"),
                        short="dsq"),
    "for-each-ref": Profile(long=_names("count sort format color shell perl python tcl points-at merged no-merged "
                                        "contains no-contains ignore-case omit-empty exclude")),
    "merge-base": Profile(long=_names("octopus independent is-ancestor fork-point all"), short="a"),
    "cat-file": Profile(long=_names("batch batch-check batch-all-objects buffer follow-symlinks unordered "
                                    "allow-unknown-type mailmap use-mailmap"), short="tsep"),
    "count-objects": Profile(long=_names("verbose human-readable"), short="vH"),
    "version": Profile(long=_names("build-options")),
    "config": Profile(long=_names("get get-all get-regexp get-urlmatch list show-origin show-scope name-only null "
                                  "includes no-includes type bool int bool-or-int path expiry-date default local "
                                  "global system worktree"), short="lz"),
}
GIT_PROFILES["reflog"] = GIT_PROFILES["log"]
# Any other subcommand: every option but those that run a program, change where git looks, or write a
# file of the caller's choosing (and their abbreviations); a few subcommands' letters besides.
GIT_OTHER = Profile(
    short="*", deny_stems=("exec", "upload", "receive", "output", "ext-diff", "textconv", "pager", "template",
                           "config", "git-dir", "work-tree", "tool", "extcmd", "cmd", "filter", "smtp", "sendmail",
                           "httpd", "browser", "editor", "ssh", "hook", "namespace", "super-prefix", "open-files",
                           "shell", "proxy", "helper", "program", "include", "separate-git-dir"),
    deny_long=_names("exec upload-pack receive-pack output output-directory template config separate-git-dir tool "
                     "extcmd open-files-in-pager"),
)
GIT_SHORT_DENIED = {"clone": "uc", "ls-remote": "u", "archive": "o", "format-patch": "o", "rebase": "x",
                    "difftool": "xtg", "mergetool": "t", "grep": "O", "submodule": "", "commit": ""}
# subcommands (and their first word) that run what they are given, or write a file named on the line
GIT_RUNS = frozenset({("submodule", "foreach"), ("bisect", "run"), ("filter-branch", ""), ("difftool", ""),
                      ("mergetool", ""), ("worktree", "add"), ("send-email", ""), ("instaweb", ""), ("daemon", ""),
                      ("web--browse", ""), ("credential", ""), ("upload-pack", ""), ("receive-pack", ""),
                      ("shell", ""), ("archive", ""), ("bundle", "create"), ("fast-import", ""),
                      ("http-backend", ""), ("remote-ext", ""), ("help", "")})
# fmt: on


def option_problem(
    profile: Profile,
    args: Sequence[str],
    accepted: frozenset[str],
    *,
    open_words: frozenset[int] = frozenset(),
    first: int = 0,
    aliases: Mapping[str, str] | None = None,
) -> str | None:
    """The first option of `args` (argv positions from `first`) that is not harmless under `profile`
    and not among the rule's own `accepted` flags (as the rule spelled them, normalised by `aliases`:
    a rule's `--output=out.patch` accepts that value only, its `--stat` any), or a word only known
    when it runs where an option may stand (`open_words`: argv positions); None when there is none."""
    aliases = aliases or {}

    def allowed(flag: str) -> bool:
        return flag in accepted or aliases.get(flag, flag) in accepted

    ended = False
    for index, arg in enumerate(args, first):
        if index in open_words and not ended and not profile.inert:
            return f"{arg!r} is only known when the line runs (it may turn into an option)"
        if ended or arg in ("-", "") or not arg.startswith("-") or re.fullmatch(r"-\d+", arg):
            continue
        if arg == "--":
            ended = profile.stop_at_dashes
            continue
        if arg.startswith("--") or profile.single_dash:
            name, eq, value = arg.partition("=")
            spelled = aliases.get(name, name) + eq + value
            if not (arg in accepted or spelled in accepted or allowed(name) or profile.long_ok(name.lstrip("-"))):
                return f"{name} is not an option that only changes what is shown"
            continue
        for letter in arg[1:]:
            if not allowed(f"-{letter}") and not profile.short_ok(letter):
                return f"-{letter} is not an option that only changes what is shown"
            if letter in profile.valued:
                break  # the rest of the cluster is its value (`-n5`, `-kfoo`)
    return None
