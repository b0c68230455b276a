"""Making an answer: routing, evidence and refusal, the answerers, prompts, and the citation check."""
