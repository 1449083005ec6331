"""Schemas of `/v1/devices` (other devices, issue 41; docs/remote.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class PairRequest(BaseModel):
    role: Literal["read", "write"] = Field(
        "read", description="`write` also lets the device change notes (never settings)"
    )


class PairCode(BaseModel):
    code: str = Field(description="One pairing, until `expires_at`; show it, never log it")
    expires_at: float = Field(description="Unix seconds")
    remote_url: str = Field(description="Where the device reaches the remote listener")
    role: Literal["read", "write"]


class DeviceInfo(BaseModel):
    id: str
    name: str
    role: Literal["read", "write"]
    created: float = Field(description="Unix seconds")
    last_seen: float | None = Field(None, description="Unix seconds of its last request")
    revoked: float | None = Field(None, description="Unix seconds; None: active")


class DeviceList(BaseModel):
    devices: list[DeviceInfo]
    remote_url: str | None = Field(None, description="None: the remote listener is off")
    problem: str | None = Field(
        None, description="The devices file is damaged: every device is refused until fixed"
    )


class DevicesRevoked(BaseModel):
    revoked: list[DeviceInfo]
