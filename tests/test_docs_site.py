"""The documentation site's link hook (scripts/mkdocs_hooks.py, run by ``make docs``): a link out
of ``docs/`` to a file of the repository becomes a repository link or the file's path; a link to
a missing file is kept, so MkDocs' strict mode still fails on it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)


class _File:
    src_path = "page.md"


class _Page:
    file = _File()


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# other\n")
    (tmp_path / "results" / "run").mkdir(parents=True)
    (tmp_path / "results" / "run" / "README.md").write_text("# run\n")
    return tmp_path


def _render(tmp_path: Path, markdown: str, repo_url: str | None = None) -> str:
    config = {"docs_dir": str(tmp_path / "docs"), "repo_url": repo_url}
    return hooks.on_page_markdown(markdown, page=_Page(), config=config, files=None)


def test_a_link_out_of_docs_to_a_file_of_the_repository_becomes_its_path(tmp_path):
    _repo(tmp_path)
    text = "see [the run](../results/run/README.md) and [other](other.md#x)"
    assert _render(tmp_path, text) == "see the run (`results/run/README.md` in the repository) and [other](other.md#x)"
    assert _render(tmp_path, text, "https://example.org/pasur/") == (
        "see [the run](https://example.org/pasur/blob/main/results/run/README.md) and [other](other.md#x)"
    )


def test_a_missing_file_an_image_a_url_and_code_are_left_alone(tmp_path):
    _repo(tmp_path)
    for text in (
        "[gone](../results/gone/README.md)",
        "![plot](../results/run/README.md)",
        "[site](https://example.org/a.md)",
        "```\n[the run](../results/run/README.md)\n```\n",
    ):
        assert _render(tmp_path, text) == text
