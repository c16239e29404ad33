"""docs/decisions/README.md indexes every decision file, with a status; a superseded decision
says so at its top (issue 22 item 5)."""

from __future__ import annotations

import re
from pathlib import Path

DECISIONS = Path(__file__).resolve().parents[1] / "docs" / "decisions"
INDEX = DECISIONS / "README.md"
ROW = re.compile(r"^\| \[(\d{3})\]\(([^)]+)\) \| (.+) \| (.+) \|$")
STATUS = re.compile(r"^(current\b.*|superseded by \[(\d{3})\]\((\d{3}-[^)]+\.md)\).*)$")


def _files() -> dict[str, Path]:
    return {p.name: p for p in sorted(DECISIONS.glob("[0-9][0-9][0-9]-*.md"))}


def _rows() -> list[tuple[str, str, str, str]]:
    rows = []
    for line in INDEX.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            rows.append((m[1], m[2], m[3], m[4]))
    return rows


def _title(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
    return re.sub(r"^\d{3}\s*[—.\-]\s*", "", first).replace("|", "\\|")


def test_every_decision_file_is_in_the_index() -> None:
    indexed = {name for _, name, _, _ in _rows()}
    missing = [p for name, p in _files().items() if name not in indexed]
    lines = [f"| [{p.name[:3]}]({p.name}) | {_title(p)} | current |" for p in missing]
    assert not missing, (
        "docs/decisions/README.md does not index these decision files; add each row to the "
        "table of its area:\n" + "\n".join(lines)
    )


def test_every_index_row_names_an_existing_file_once_with_its_number() -> None:
    files = _files()
    rows = _rows()
    assert len(rows) >= 150
    names = [name for _, name, _, _ in rows]
    assert len(names) == len(set(names)), "a decision is indexed twice"
    for num, name, _, _ in rows:
        assert name in files, f"README.md indexes {name}, which is not in docs/decisions/"
        assert name.startswith(num + "-"), f"README.md row [{num}] links to {name}"


def test_every_status_is_current_or_superseded_and_superseded_files_say_so() -> None:
    files = _files()
    superseded = 0
    for num, name, _, status in _rows():
        m = STATUS.match(status)
        assert m, (
            f"README.md row [{num}]: status {status!r} is not 'current…' or 'superseded by [N](…)'"
        )
        if m[2] is None:
            continue
        superseded += 1
        assert m[3] in files, f"README.md row [{num}]: superseded by {m[3]}, which does not exist"
        head = "\n".join(files[name].read_text(encoding="utf-8").splitlines()[:6])
        assert re.search(rf"\*\*Superseded by \[{m[2]}\]", head), (
            f"{name} is superseded by {m[2]} in the index but does not say so at its top "
            f"(add '> **Superseded by [{m[2]}]({m[3]})**: …' under its title)"
        )
    assert superseded >= 2  # 006 and 040 at least
