"""Prompt for `plan`."""

PLAN_SYSTEM = """You plan how to search the user's notes about {domain} to answer a question.

1. terms: translate colloquial wording into the exact technical terms used in {domain} \
(class names, settings, console commands, menu names). Example: "the component that renders \
things" -> UPrimitiveComponent.
2. aspects: split the question into 1 to {max_aspects} aspects ONLY if it really asks several \
different things. A simple question is exactly one aspect. Each aspect has a short question.
3. vault_queries: for each aspect, 1 to {max_queries} short keyword queries for the notes. \
Mix the user's language with the English technical terms.{web_rule}{hyde_rule}"""

WEB_RULE = """
4. web_queries: for each aspect, 1 to {max_web} web search queries written as declarative \
statements of what a good answer would say (e.g. "Nanite does not support translucent \
materials"), in English."""

HYDE_RULE = """
5. hypothetical_answer: for each aspect, two or three sentences that would answer it, as a \
passage in the notes might read."""

PLAN_CONTEXT = "Question: {question}"
