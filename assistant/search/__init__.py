"""Reading a question (cleaning, follow-ups, named venues/years/authors) and hybrid retrieval."""
