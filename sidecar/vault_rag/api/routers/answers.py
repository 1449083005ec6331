"""`POST /v1/answers/{id}/feedback` and `/promote`: the human in the loop.

A rating changes later rankings through the feedback prior (retrieval/hybrid.py); promoting
writes the answer as a new note in the vault's answers folder and indexes it like any note.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import Field

from vault_rag.api.deps import State
from vault_rag.api.errors import ApiError
from vault_rag.api.schemas import ApiModel
from vault_rag.feedback.answers import UnknownAnswerError
from vault_rag.feedback.promote import PromoteError, promote_by_id
from vault_rag.feedback.store import submit_feedback

router = APIRouter(prefix="/answers", tags=["answers"])

AnswerId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,128}$")]


class FeedbackIn(ApiModel):
    rating: Literal[1, -1, "up", "down"] = Field(description="+1 / -1 (or `up` / `down`)")
    comment: str | None = Field(None, max_length=4000)
    wrong: list[str] = Field(
        default_factory=list,
        max_length=200,
        description="Chunk ids of cited sources the user marked as wrong",
    )


class FeedbackOut(ApiModel):
    answer_id: str
    rating: int
    recorded: bool = True


class PromoteIn(ApiModel):
    title: str | None = Field(None, max_length=500, description="Default: from the question")
    folder: str | None = Field(
        None, max_length=500, description="A sub-folder of the answers folder"
    )


class PromoteOut(ApiModel):
    answer_id: str
    path: str = Field(description="Vault-relative path of the new note")
    note_path: str = Field(description="Same as `path` (kept for clients that read this name)")


@router.post("/{answer_id}/feedback", response_model=FeedbackOut, summary="Rate an answer")
async def rate_answer(answer_id: AnswerId, body: FeedbackIn, state: State) -> FeedbackOut:
    data_dir = state.index.data_dir
    try:
        feedback = await asyncio.to_thread(
            submit_feedback, data_dir, answer_id, body.rating, body.comment, body.wrong
        )
    except UnknownAnswerError as exc:
        raise ApiError(404, "not_found", f"no answer with id {answer_id!r}") from exc
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    return FeedbackOut(answer_id=answer_id, rating=feedback.rating)


@router.post("/{answer_id}/promote", response_model=PromoteOut, summary="Save as a note")
async def promote(answer_id: AnswerId, body: PromoteIn, state: State) -> PromoteOut:
    settings = state.settings
    vault = state.index.vault_root
    try:
        written = await asyncio.to_thread(
            promote_by_id,
            state.index.data_dir,
            vault,
            settings.answers_folder,
            answer_id,
            body.title,
            body.folder,
        )
    except UnknownAnswerError as exc:
        raise ApiError(404, "not_found", f"no answer with id {answer_id!r}") from exc
    except PromoteError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    rel = written.relative_to(vault).as_posix()
    # Indexed like any note written on disk, through the single writer.
    state.sync.submit([rel])
    return PromoteOut(answer_id=answer_id, path=rel, note_path=rel)
