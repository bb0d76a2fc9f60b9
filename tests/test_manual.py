"""The manual (README and docs/) reads as one: it states the release, not the lab's history.

Study reports under ``studies/`` may tell their story with dates and runs; the manual may not.
Every relative link of the manual and of the reports points at a file of the repository, which
the docs build alone cannot check for links that leave ``docs/`` (mkdocs.yml, ``not_found``),
and every anchor at a heading of its page (the site build fails on a missing one).
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MANUAL = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))]
REPORTS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "studies").rglob("*.md"))

FORBIDDEN = {
    "a date": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
    "a commit hash": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    "an issue number": re.compile(r"\bissues? #?\d+", re.I),
    "a path of one machine's disk": re.compile(r"(?<![\w.])/(work|root|home|Users)/"),
}
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+ (.+)$", re.M)
MODEL_PAGE_LINES = 450  # docs/mara.md, the model page: architecture, reward, recipe, results


@pytest.mark.parametrize("page", MANUAL)
@pytest.mark.parametrize("what", sorted(FORBIDDEN))
def test_manual_page_carries_no_lab_history(page: str, what: str) -> None:
    text = (ROOT / page).read_text()
    found = [
        f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
        for m in FORBIDDEN[what].finditer(text)
    ]
    assert not found, f"{page} holds {what}: {found[:5]}"


@pytest.mark.parametrize("what", sorted(set(FORBIDDEN) - {"a date"}))
def test_the_changelog_names_releases_not_the_lab(what: str) -> None:
    """The changelog, which the site includes, dates its releases only."""
    text = (ROOT / "CHANGELOG.md").read_text()
    found = [m.group(0) for m in FORBIDDEN[what].finditer(text)]
    assert not found, f"CHANGELOG.md holds {what}: {found[:5]}"


def test_the_model_page_is_short() -> None:
    lines = (ROOT / "docs" / "mara.md").read_text().count("\n")
    assert lines <= MODEL_PAGE_LINES, f"docs/mara.md has {lines} lines (<= {MODEL_PAGE_LINES})"


def test_every_study_folder_has_its_report() -> None:
    folders = [p for p in (ROOT / "studies").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert folders, "studies/ holds no study"
    missing = [p.name for p in folders if not (p / "REPORT.md").is_file()]
    assert not missing, f"studies without a REPORT.md: {missing}"


@pytest.mark.parametrize("page", MANUAL + REPORTS)
def test_relative_links_point_at_files(page: str) -> None:
    broken = []
    for target in LINK.findall((ROOT / page).read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address, or an anchor of the same page
        path = (ROOT / page).parent / target.split("#")[0]
        if not path.exists():
            broken.append(target)
    assert not broken, f"{page} links to files that do not exist: {broken}"


def heading_anchors(page: Path) -> set[str]:
    """The anchors a page's headings get: the site's slugs (runs of spaces and hyphens folded)
    and GitHub's (each space a hyphen)."""
    anchors = set()
    for heading in HEADING.findall(page.read_text()):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
        words = re.sub(r"[^\w\s-]", "", text).strip().lower()
        anchors |= {re.sub(r"[-\s]+", "-", words), words.replace(" ", "-")}
    return anchors


@pytest.mark.parametrize("page", MANUAL + REPORTS)
def test_anchors_name_headings_of_their_page(page: str) -> None:
    broken = []
    for target in LINK.findall((ROOT / page).read_text()):
        file, _, anchor = target.partition("#")
        if re.match(r"[a-z]+:", target) or not anchor:
            continue
        path = (ROOT / page).parent / file if file else ROOT / page
        if path.suffix == ".md" and path.exists() and anchor not in heading_anchors(path):
            broken.append(target)
    assert not broken, f"{page} links to anchors that no heading makes: {broken}"


CITATION = re.compile(r"((?:docs|studies)/[\w/]+\.md),\s+\*([^*]+)\*")
SOURCES = sorted(
    str(p.relative_to(ROOT))
    for folder in ("src", "lab", "benchmarks", "studies")
    for p in (ROOT / folder).rglob("*.py")
)


@pytest.mark.parametrize("source", SOURCES)
def test_code_cites_sections_the_manual_and_reports_have(source: str) -> None:
    """A docstring's ``docs/PAGE.md, *Section*`` names a heading of that page (its start)."""
    missing = []
    for page, cited in CITATION.findall((ROOT / source).read_text()):
        cited = " ".join(cited.split())
        if not (ROOT / page).is_file():
            missing.append(f"{page} (no such page)")
            continue
        headings = [
            " ".join(h.replace("`", "").split()) for h in HEADING.findall((ROOT / page).read_text())
        ]
        if not any(h.startswith(cited.replace("`", "")) for h in headings):
            missing.append(f"{page}, *{cited}*")
    assert not missing, f"{source} cites sections that no heading starts: {missing}"
