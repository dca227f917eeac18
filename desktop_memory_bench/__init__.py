"""`desktop-memory bench`: retrieval quality, indexing throughput, query latency and memory on BEIR-format data.

No Qt here. Two modes:

- dataset mode: index a BEIR folder (corpus.jsonl, queries.jsonl, qrels.tsv) through the app's real pipeline
  into a cached database, run every query through ``MemoryService.search_outcome`` and score it with ir-measures;
- scale mode (``--scale N``): grow a synthetic index of N chunks from the dataset's real chunk texts and vectors
  (recombined and perturbed) and measure store and query cost as the index grows.
"""
