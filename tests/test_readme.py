"""The README's quick start is what CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quick_start_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_quick_start_is_two_commands_and_ci_runs_them():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert "pytest" in commands[1]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    for command in commands:
        assert command in ci, f"{command!r} is in the README but not in .ci/run"
    # the README's command is the quick set; CI runs the slow set after it
    assert "python -m pytest -m slow" in ci
