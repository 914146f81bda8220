"""MkDocs hooks (mkdocs.yml): a docs page's relative link to a file of the repository outside
``docs/`` (``../results/x/README.md``) is right on GitHub but has no page in the site; it becomes
a link into the repository at ``repo_url`` where mkdocs.yml sets one, else the file's path as
code. A link to a file that does not exist is left alone, so strict mode still fails on it."""

from __future__ import annotations

import re
from pathlib import Path

LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(([^)\s#]+)(#[^)\s]*)?\)")
FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def _rewrite(text: str, here: Path, docs: Path, repo: Path, repo_url: str | None) -> str:
    def outside(m: re.Match) -> str:
        target = m.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return m.group(0)
        path = (here / target).resolve()
        if path.is_relative_to(docs) or not path.is_relative_to(repo) or not path.exists():
            return m.group(0)
        rel = path.relative_to(repo).as_posix()
        if repo_url:
            return f"[{m.group(1)}]({repo_url.rstrip('/')}/blob/main/{rel}{m.group(3) or ''})"
        return f"{m.group(1)} (`{rel}` in the repository)"

    return LINK.sub(outside, text)


def on_page_markdown(markdown: str, page, config, files) -> str:
    docs = Path(config["docs_dir"]).resolve()
    here = (docs / page.file.src_path).parent
    parts = FENCE.split(markdown)  # text, fence, code, fence, text, ...: rewrite the text only
    fenced = False
    for i, part in enumerate(parts):
        if FENCE.fullmatch(part):
            fenced = not fenced
        elif not fenced:
            parts[i] = _rewrite(part, here, docs, docs.parent, config.get("repo_url"))
    return "".join(parts)
