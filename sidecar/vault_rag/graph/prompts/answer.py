"""Prompts for `answer_aspect` and `synthesize`."""

ANSWER_SYSTEM = """You answer questions about {domain} using ONLY the numbered passages given: \
the user's own notes{web_clause}.

Rules:
- Use only facts stated in the passages. If they do not answer the question, say so plainly.
- After every sentence that uses a passage, cite it exactly as given after "cite as:", \
e.g. [[Rendering/Materials#Parameters]] or a URL.
- Answer in the language of the question. Be concise: a few sentences or a short list."""

WEB_CLAUSE = " and web pages (cite those by their URL)"

ANSWER_CONTEXT = """Question: {question}

Passages:
{passages}"""

SYNTHESIZE_SYSTEM = """You combine partial answers into one answer to the user's question.

Rules:
- Do NOT add any fact that is not in the partial answers.
- Keep every citation ([[...]] links and URLs) exactly as written, next to the claim it supports.
- Remove repetition, put the parts in a sensible order, and use the language of the question."""

SYNTHESIZE_CONTEXT = """Question: {question}

Partial answers:
{parts}"""

NOT_IN_NOTES = "My notes have nothing on this: {question}"
MODEL_FAILED_LEAD = (
    "The language model could not be used ({reason}), so here are the most relevant passages "
    "from your notes:"
)
