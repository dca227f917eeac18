"""Turning files on disk into text: walking folders, detecting kinds, decoding, PDF extraction.

The pipeline (``pipeline.py``) glues these together with the chunker and the store.
"""
