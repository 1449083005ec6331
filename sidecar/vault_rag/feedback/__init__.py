"""The human in the loop: answers are recorded, rated, fed back into ranking, and promoted to notes.

- `answers`: every answer the assistant gives (question, text, citations, model), by id;
- `store`: ratings (+1 / −1), comments and "this source was wrong" marks;
- `prior`: a bounded per-chunk ranking prior from the rating history, decaying with age;
- `promote`: an approved answer written into the vault as a new note (`origin: promoted`).

Answers and feedback live in one SQLite file in the data dir, beside the index but outside it:
`vault-rag index --rebuild` keeps them (chunk ids are stable across rebuilds).
"""
