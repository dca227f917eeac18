"""What refusing DTDs in the parser costs (issue 21 §6): ``ingest.office.archive.parse_xml`` (an expat pass with the
declaration handlers, then ElementTree's C parser) against ``ElementTree.fromstring`` alone, on a synthetic Word
``document.xml`` of 50,000 paragraphs (6.6 MB). Prints the best of ``--repeat`` runs of each.

    python -m desktop_memory_bench.xml_check
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from xml.etree import ElementTree as ET
from xml.parsers import expat

from desktop_memory.ingest.office.archive import parse_xml

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def document(paragraphs: int) -> bytes:
    body = "".join(f'<w:p><w:pPr><w:pStyle w:val="Normal"/></w:pPr><w:r><w:t xml:space="preserve">paragraph {i} '
                   "with some words in it</w:t></w:r></w:p>" for i in range(paragraphs))
    return f'<w:document xmlns:w="{W}"><w:body>{body}</w:body></w:document>'.encode()


def _check_only(data: bytes) -> None:
    p = expat.ParserCreate()
    p.StartDoctypeDeclHandler = lambda *_a: None
    p.Parse(data, True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paragraphs", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = document(args.paragraphs)
    rows: dict[str, Callable[[bytes], object]] = {
        "ElementTree.fromstring": ET.fromstring,
        "expat check pass only": _check_only,
        "parse_xml (check + ElementTree)": lambda d: parse_xml(d, "part"),
    }
    print(f"document.xml: {len(data) / 1e6:.1f} MB, {args.paragraphs} paragraphs; best of {args.repeat}")
    print(f"{'parser':<34} {'seconds':>8}")
    for name, fn in rows.items():
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn(data)
            best = min(best, time.perf_counter() - t0)
        print(f"{name:<34} {best:>8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
