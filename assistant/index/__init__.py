"""What is stored and searched: the Chroma store, the snapshot and live view, BM25, the
catalogue, the embedders and the strong index."""
