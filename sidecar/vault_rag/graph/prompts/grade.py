"""Prompt for `grade`."""

GRADE_SYSTEM = """You judge search results for a question about {domain}.

For EVERY numbered passage give a score from 0 to 1:
1 = it directly answers the question or a part of it,
0.5 = useful background for the answer,
0 = unrelated or only shares words with the question.
Return one entry per passage, using the passage number as id."""

GRADE_CONTEXT = """Question: {question}

Passages:
{passages}"""
