"""Files of the home folder that run code at the user's next login, shell, `git` or desktop session.

They matter when the agent can write the home folder (arreio run in `~`, or `~` among
`sandbox.writable_roots`): then each is protected like arreio's own config — refused to the file
tools, read-only in the sandbox, and one that did not exist is moved away if a command makes it.
"""

from __future__ import annotations

from pathlib import Path

STARTUP = "a file your shell, git or session runs at startup"

# Relative to the home folder. Folders protect everything in them.
STARTUP_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".config/fish",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".pam_environment",
    ".ssh",
    ".gnupg",
    ".gitconfig",
    ".config/git",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".local/bin",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".docker",
    ".config/pip",
    ".pip",
    ".vimrc",
    ".vim",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    ".tmux.conf",
    ".screenrc",
    ".inputrc",
    ".config/containers",
    ".kube",
    ".aws",
    ".azure",
    ".config/gcloud",
)


def startup_paths(home: Path) -> list[Path]:
    """Every startup file or folder of `home` (existing or not)."""
    return [home / name for name in STARTUP_FILES]
