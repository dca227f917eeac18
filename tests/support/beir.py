"""A tiny BEIR folder (six documents, five judged queries) for the benchmark harness's tests: small enough to index
in a second with the hash embedder, with ids that need escaping as file names ("d/4", "d 5")."""

from __future__ import annotations

import json
from pathlib import Path

DOCS = {
    "d1": ("Cats", "Cats are small domesticated carnivorous mammals that purr and hunt mice."),
    "d2": ("Dogs", "Dogs are loyal companions that were domesticated from wolves long ago."),
    "d3": ("Photosynthesis", "Plants convert sunlight, water and carbon dioxide into glucose and oxygen."),
    "d/4": ("Rust", "Rust is a systems programming language focused on memory safety and speed."),
    "d 5": ("", "The mitochondria is the powerhouse of the cell, producing ATP for energy."),
    "d6": ("Volcanoes", "Volcanoes erupt molten rock called lava from the mantle of the earth."),
}
QUERIES = {"q1": "which animal purrs and hunts mice", "q2": "how do plants make oxygen from sunlight",
           "q3": "memory safe systems programming language", "q4": "cell energy ATP", "q5": "lava eruption"}
QRELS = [("q1", "d1", 1), ("q2", "d3", 2), ("q3", "d/4", 1), ("q4", "d 5", 1), ("q4", "d3", 1), ("q5", "d6", 1)]
TRAIN_QRELS = [("q1", "d1", 1), ("q2", "d3", 1)]


def make_beir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for did, (title, text) in DOCS.items():
            fh.write(json.dumps({"_id": did, "title": title, "text": text}) + "\n")
    for qfile, rfile, qrels in (("queries.jsonl", "qrels.tsv", QRELS),
                                ("queries_train.jsonl", "qrels_train.tsv", TRAIN_QRELS)):
        with open(folder / qfile, "w", encoding="utf-8") as fh:
            for qid, text in QUERIES.items():
                fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
        with open(folder / rfile, "w", encoding="utf-8") as fh:
            fh.write("query-id\tcorpus-id\tscore\n")
            for q, d, s in qrels:
                fh.write(f"{q}\t{d}\t{s}\n")
    return folder
