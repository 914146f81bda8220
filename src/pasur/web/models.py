"""The request bodies of the JSON API (games and tables), as strict pydantic models: unknown
fields, wrong types and out-of-range numbers are refused with 422 before any work."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Header
from pydantic import BaseModel, ConfigDict, Field

from pasur.game.match import MAX_TARGET
from pasur.web.levels import DEFAULT_LEVEL

TOKEN_HEADER = "X-Pasur-Token"

Card = Annotated[str, Field(min_length=1, max_length=8)]
Token = Annotated[str | None, Header(alias=TOKEN_HEADER, max_length=256)]


class RulesIn(BaseModel):
    """Match rules; the default (``target`` null) is a single hand."""

    model_config = ConfigDict(extra="forbid", strict=True)
    target: int | None = Field(None, ge=1, le=MAX_TARGET)
    sur_cancellation: bool = False
    fifty_point_rule: bool = False


class NewGame(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    level: str = Field(DEFAULT_LEVEL, min_length=1, max_length=32)
    rules: RulesIn = Field(default_factory=RulesIn)
    seat: Literal["alex", "bob"] = "alex"
    seed: int | None = Field(None, ge=0, le=2**53)


class MoveIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    card: Card
    captured: list[Card] = Field(default_factory=list, max_length=52)
    moves_played: int | None = Field(None, ge=0, le=48)


Level = Annotated[str, Field(min_length=1, max_length=32)]
PlayerToken = Annotated[str, Field(min_length=1, max_length=256)]


class NewTable(BaseModel):
    """A table for two people: the opener's seat in the first hand, the match rules, the move
    clock (seconds, null for none), and an AI level to take the other seat at once (null: a
    person joins with the invite)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    rules: RulesIn = Field(default_factory=RulesIn)
    seat: Literal["alex", "bob"] = "alex"
    clock_s: int | None = Field(None, ge=5, le=3600)
    ai_level: Level | None = None
    seed: int | None = Field(None, ge=0, le=2**53)
    #: a rated match (``docs/web.md``, "Ratings and the ladder"): the opener's player token
    rated: bool = False
    player_token: PlayerToken | None = None


class JoinIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    invite: str = Field(min_length=1, max_length=256)
    player_token: PlayerToken | None = None


class NewPlayer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(min_length=1, max_length=64)


class SeatAiIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    level: Level


class LeaveIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    level: Level | None = None
