"""Code hidden inside expansions bash evaluates: `${…}` (defaults, patterns, substrings, subscripts),
`$((…))` and `$[…]` arithmetic, array subscripts, `${…}` in an unquoted here-document, backticks in
`${…}`, and the words bash reads as a variable name or as arithmetic (`test -v 'a[$(cmd)]'`,
`[[ X -eq 0 ]]`, a variable whose value is `a[$(cmd)]` read by arithmetic). A deny rule sees the command
hidden there; an allow rule never covers a line that runs it, nor one whose expansions cannot be read
whole. Every hidden line is proven to run its command in real bash."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from arreio.engine.walls.equivalents import parse
from arreio.engine.walls.policy import decide
from arreio.engine.walls.settings import GovernanceSettings

ALLOW = GovernanceSettings(
    policy=[
        {"tool": "shell", "match": m, "action": "allow"}
        for m in ("echo", "cat", "ls", "test", "[", "[[", "unset", "let")
    ]
)
DENY_TOUCH = GovernanceSettings(
    policy=[{"tool": "shell", "match": "touch", "action": "deny"}, {"tool": "shell", "action": "allow"}]
)

# every line runs `touch PWN`, spelled inside an expansion; a deny rule on touch must see it
HIDDEN = [
    "echo ${x:-$(touch PWN)}",
    "echo ${x-$(touch PWN)}",
    "x=1; echo ${x:+$(touch PWN)}",
    "echo ${HOME/$(touch PWN)/y}",
    "echo ${HOME//o/$(touch PWN)}",
    "echo ${HOME#$(touch PWN)}",
    "echo ${HOME%%$(touch PWN)}",
    "echo ${HOME^^$(touch PWN)}",
    'echo "${x:-$(touch PWN)}"',
    "echo \"${x:-'$(touch PWN)'}\"",  # in "…" the single quotes are text: the $(…) runs
    'echo ${x:-"$(touch PWN)"}',
    "echo ${x:-${y:-$(touch PWN)}}",
    'echo ${x:-"}"$(touch PWN)}',
    "echo ${x:-`touch PWN`}",
    'echo "${x:-`touch PWN`}"',
    "ls ${x:-`touch PWN`}",
    "echo $(( $(touch PWN) ))",
    "echo $(( 1 + $(touch PWN) ))",
    "echo $(( `touch PWN` ))",
    "echo $((touch PWN) )",  # not arithmetic: bash reads `$( (touch PWN) )`
    "echo $[ $(touch PWN) ]",
    "echo $((a[$(touch PWN)]))",
    'echo "${a[$(touch PWN)]}"',
    "echo ${a[$(touch PWN)]}",
    "echo ${#BASH_VERSINFO[$(touch PWN)]}",
    "echo ${HOME:$(touch PWN)}",
    "echo ${HOME:0:$(touch PWN)}",
    "echo ${x:-$((1 + $(touch PWN)))}",
    "cat <<END\n${x:-$(touch PWN)}\nEND",
    "cat <<END\n$(( $(touch PWN) ))\nEND",
    "cat <<END\n${a[$(touch PWN)]}\nEND",
    "test -v 'a[$(touch PWN)]'",
    "[ -v 'a[$(touch PWN)]' ]",
    "[[ -v 'a[$(touch PWN)]' ]]",
    "[[ 'a[$(touch PWN)]' -eq 0 ]]",
    "a=(1); unset 'a[$(touch PWN)]'",
    "let 'x=a[$(touch PWN)]'",
    "x='a[$(touch PWN)]'; echo $((x))",
    "x='a[$(touch PWN)]'; echo $(($x))",
    "x='a[$(touch PWN)]'; test -v \"$x\"",
    "for x in 'a[$(touch PWN)]'; do echo $((x)); done",
    "for x in 'a[$(touch PWN)]'; do [[ $x -eq 0 ]]; done",
]

# what runs is not known from the line: never allowed (a deny rule cannot see what is not there)
UNREADABLE = [
    "echo ${x@P}",
    "echo ${!x}",
    "echo ${x~}",
    "echo ${x='a[$(touch PWN)]'} $((x))",
    "for x in $(cat list); do echo $((x)); done",
    'for x in *; do test -v "$x"; done',
    "echo $(( ${y:-0} + z ))${z:=1}",
]

HONEST = [
    "echo ${HOME}",
    'echo "${HOME}/x"',
    "echo ${x:-default}",
    "echo ${x:-'}'}",
    "echo ${#x}",
    "echo ${x%.py}",
    'echo "${x//a/b}"',
    "echo ${a[0]} ${a[@]} ${!a[@]} ${#a[@]}",
    "echo ${!BASH*}",
    "echo ${x@Q}",
    "echo $((1 + 2))",
    "echo $(( (1 + 2) * 3 ))",
    "echo ${x:1:2}",
    "echo $((HOME))",
    "test -v HOME",
    "[ -v x ]",
    "test -v 'a[0]'",
    "[[ -v HOME ]]",
    "for i in 1 2 3; do echo $((i * 2)); done",
    "for f in a b; do echo $f; done",
    "cat <<END\n${HOME} ${x:-y}\nEND",
    "cat <<'END'\n${x:-$(touch PWN)}\nEND",
    "echo '${x:-$(touch PWN)}'",
    "echo '$(( $(touch PWN) ))'",
]


def action(settings: GovernanceSettings, command: str) -> str:
    return decide(settings, "shell", {"command": command}, tool_sensitive=True, env={}).action


@pytest.mark.parametrize("command", HIDDEN)
def test_a_deny_rule_sees_the_command_an_expansion_hides(command: str) -> None:
    assert action(DENY_TOUCH, command) == "deny", [c.argv for c in parse(command).commands]


@pytest.mark.parametrize("command", HIDDEN + UNREADABLE)
def test_an_allow_rule_never_covers_a_hidden_or_unreadable_expansion(command: str) -> None:
    assert action(ALLOW, command) != "allow", [c.argv for c in parse(command).commands]


@pytest.mark.parametrize("command", HONEST)
def test_ordinary_expansions_stay_allowed(command: str) -> None:
    assert action(ALLOW, command) == "allow", [(c.argv, c.substitutions) for c in parse(command).commands]
    assert action(DENY_TOUCH, command) == "allow"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("command", [*HIDDEN, UNREADABLE[3]])
def test_every_hidden_line_does_run_its_command_in_bash(command: str, tmp_path: Path) -> None:
    """Not a parser check: proof that each line above is a real door (bash 5 runs the hidden touch)."""
    subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=30, check=False)
    assert (tmp_path / "PWN").exists(), f"bash did not run the touch hidden in {command!r}"


@pytest.mark.parametrize(
    "command",
    [
        "echo " + "${x:-" * 3000 + "}" * 3000,
        "echo " + "$((" * 3000 + "))" * 3000,
        "echo " + "${a[" * 3000 + "]}" * 3000,
        "echo " + "${x:-" * 3000,
        "echo " + "$((" * 3000,
        "x=y; y=x; echo $((x))",
        "x='a[b[c[$(touch PWN)]]]'; echo " + "$((x))" * 3000,
    ],
)
def test_deep_or_self_referring_expansions_end_and_are_not_allowed(command: str) -> None:
    assert action(ALLOW, command) != "allow"
