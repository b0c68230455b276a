"""Corpus in, papers out: file readers (listings, JSONL/CSV, BibTeX/CSL), records, ingestion,
changes and removal."""
