"""The documentation's relative links resolve, and the README stays a front page.

Every relative link and image in the checked Markdown files must name a file or folder of
the repository, and a ``#anchor`` into a Markdown file must name one of its headings as
GitHub writes them (lower case, punctuation dropped, spaces as hyphens, ``-1``, ``-2``, ...
for repeats). Links inside code (fenced blocks, inline spans) are not links.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted(
    {
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        ROOT / "envs" / "README.md",
        ROOT / "checkpoints" / "README.md",
        ROOT / "notebooks" / "README.md",
        *(ROOT / "docs").glob("*.md"),
    }
)
README_MAX_LINES = 200

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading (before numbering repeats)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link or image counts as its text
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a Markdown file offers: its headings' slugs and explicit HTML anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    text = path.read_text(encoding="utf-8")
    for line in prose_lines(text):
        found.update(HTML_ANCHOR.findall(line))
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The link targets of a Markdown file, code left out."""
    targets = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        prose = CODE_SPAN.sub("", line)
        targets += INLINE_LINK.findall(prose)
        definition = REFERENCE_DEF.match(prose)
        if definition:
            targets.append(definition.group(1))
    return targets


def broken_links(path: Path) -> list[str]:
    """What is wrong with each relative link of ``path`` (empty when every one resolves)."""
    problems = []
    for target in links(path):
        if SCHEME.match(target):
            continue  # http(s), mailto: not checked here
        file_part, _, anchor = target.partition("#")
        if file_part.startswith("/"):
            problems.append(f"{target}: write a relative link")
            continue
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{target}: no such file or folder")
            continue
        if anchor and dest.suffix == ".md" and unquote(anchor) not in anchors(dest):
            shown = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest.name
            problems.append(f"{target}: no heading #{anchor} in {shown}")
    return problems


def test_the_checked_files_exist() -> None:
    for path in DOCS:
        assert path.is_file(), path
    assert len([p for p in DOCS if p.parent.name == "docs"]) >= 6


@pytest.mark.parametrize("path", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_relative_links_resolve(path: Path) -> None:
    assert broken_links(path) == []


def test_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_the_checker_finds_broken_links(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# A `code` heading: with (punctuation)!\n## Twice\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n"
        "[ok](other.md#a-code-heading-with-punctuation) [ok](other.md#twice-1) [ok](#top)\n"
        "[bad](other.md#twice-2) [bad](missing.md) [bad](#nowhere) [web](https://example.org/x.md#y)\n"
        "`[not a link](missing.md)`\n"
        "```\n[not a link](missing.md)\n```\n"
    )
    assert broken_links(page) == [
        "other.md#twice-2: no heading #twice-2 in other.md",
        "missing.md: no such file or folder",
        "#nowhere: no heading #nowhere in page.md",
    ]
