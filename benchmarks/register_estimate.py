"""The register estimate without a compiler, each shipped kernel left out: writes the table into
``docs/registers.md`` (its generated block ``register-loko``) and prints it.

Run from the repository root: python benchmarks/register_estimate.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pystencils_plugin.register_estimate import loko_markdown
from pystencils_plugin.register_table import shipped_table

PAGE = Path("docs/registers.md")
BLOCK = re.compile(r"(<!-- generated: register-loko -->\n).*?(<!-- end generated -->)", re.S)


def table_markdown() -> str:
    table = shipped_table()
    if table is None:
        raise SystemExit("error: no shipped register table")
    labels = dict(sorted(table.labels.items(), key=lambda kv: kv[1]))
    return loko_markdown(table.samples, labels)


def main() -> int:
    text = table_markdown()
    print(text, end="")
    if PAGE.is_file():
        page = PAGE.read_text(encoding="utf-8")
        PAGE.write_text(BLOCK.sub(lambda m: m.group(1) + text + m.group(2), page), encoding="utf-8")
        print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
