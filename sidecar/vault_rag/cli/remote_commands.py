"""Other devices (issue 41, docs/remote.md): `vault-rag devices pair|list|revoke` on the
desktop, and `vault-rag pair` on the device. (`search` / `ask` with `--remote` are run by
`entry.py`, `remote/commands.py`.)"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from vault_rag.cli.app import DataDirOption, JsonOption, VaultOption, app, err, fail, out
from vault_rag.settings import load_settings

devices_app = typer.Typer(help="Other devices: pairing codes, the paired devices, revocation.")
app.add_typer(devices_app, name="devices")


def _sidecar(vault: Path, data_dir: Path | None) -> tuple[str, str] | None:
    from vault_rag.serving.search_client import running_sidecar

    found = running_sidecar(vault, data_dir)
    return None if found is None else (found[0], found[1])


def _ask_sidecar(
    method: str, url: str, token: str, path: str, body: dict[str, Any] | None = None
) -> Any:
    import httpx

    try:
        response = httpx.request(
            method,
            f"{url}{path}",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
            trust_env=False,
        )
    except httpx.HTTPError as exc:
        fail(f"the sidecar at {url} did not answer: {exc}")
    try:
        data = response.json()
    except ValueError:
        data = {}
    if response.status_code != 200:
        fail(str(data.get("message") or f"the sidecar answered HTTP {response.status_code}"))
    return data


@devices_app.command("pair")
def devices_pair(
    vault: VaultOption,
    data_dir: DataDirOption = None,
    write: Annotated[
        bool, typer.Option("--write", help="Let the device change notes too (never settings).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """A one-time code for pairing another device, from the running sidecar (started with
    `--remote-listen`). Valid for one pairing and a few minutes."""
    found = _sidecar(vault, data_dir)
    if found is None:
        fail(
            "no sidecar runs on this vault; start one with `vault-rag serve --vault V "
            "--remote-listen HOST:PORT`"
        )
        return
    url, token = found
    role = "write" if write else "read"
    data = _ask_sidecar("POST", url, token, "/v1/devices/pair", {"role": role})
    if as_json:
        sys.stdout.write(json.dumps(data) + "\n")
        return
    left = max(0, int(data["expires_at"] - time.time()))
    out.print(f"code: [bold]{escape(data['code'])}[/]", highlight=False)
    err.print(
        f"on the device: vault-rag pair {escape(data['remote_url'])} {escape(data['code'])} "
        f"--name NAME --out FILE  ({role}; valid {left // 60} min {left % 60} s, one pairing)",
        highlight=False,
    )


def _local_store(vault: Path, data_dir: Path | None) -> Any:
    from vault_rag.remote.devices import DeviceStore

    settings = load_settings(vault=vault, data_dir=data_dir)
    return DeviceStore(settings.resolved_data_dir())


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


@devices_app.command("list")
def devices_list(
    vault: VaultOption, data_dir: DataDirOption = None, as_json: JsonOption = False
) -> None:
    """The paired devices: name, role, when each was last seen, revoked or not."""
    found = _sidecar(vault, data_dir)
    if found is not None:
        data = _ask_sidecar("GET", *found, "/v1/devices")
        devices, problem = data["devices"], data.get("problem")
    else:
        store = _local_store(vault, data_dir)
        problem = store.problem
        devices = [] if problem else store.listing()
    if as_json:
        sys.stdout.write(json.dumps({"devices": devices, "problem": problem}, indent=2) + "\n")
    else:
        table = Table(title=f"{len(devices)} paired devices")
        for column in ("name", "role", "last seen", "paired", "state"):
            table.add_column(column)
        for d in devices:
            state = "revoked" if d["revoked"] else "active"
            table.add_row(d["name"], d["role"], _when(d["last_seen"]), _when(d["created"]), state)
        out.print(table)
    if problem:
        fail(problem)


@devices_app.command("revoke")
def devices_revoke(
    name: Annotated[str, typer.Argument(help="The device's name (or id).")],
    vault: VaultOption,
    data_dir: DataDirOption = None,
) -> None:
    """Revoke a device: its requests are refused from now on, an answer streaming to it stops.
    Through the running sidecar when there is one, else in the data dir's devices file."""
    from vault_rag.remote.devices import DevicesError

    found = _sidecar(vault, data_dir)
    if found is not None:
        from urllib.parse import quote

        data = _ask_sidecar("DELETE", *found, f"/v1/devices/{quote(name, safe='')}")
        revoked = data["revoked"]
    else:
        try:
            revoked = [d.public() for d in _local_store(vault, data_dir).revoke(name)]
        except DevicesError as exc:
            fail(str(exc))
            return
        if not revoked:
            fail(f"no paired device named {name!r}")
    for d in revoked:
        out.print(f"revoked {escape(d['name'])} ({escape(d['id'])})", highlight=False)


@app.command("pair")
def pair_command(
    url: Annotated[str, typer.Argument(help="The sidecar's remote listener, http://HOST:PORT")],
    code: Annotated[str, typer.Argument(help="The one-time code the desktop shows.")],
    name: Annotated[str, typer.Option("--name", help="This device's name, e.g. laptop.")],
    out_file: Annotated[
        Path,
        typer.Option("--out", help="Where to write this device's credentials (mode 0600)."),
    ],
) -> None:
    """Pair this machine as another device of a sidecar (its `--remote-listen` address), with
    the code from `vault-rag devices pair`. The code itself never crosses the network."""
    from vault_rag.remote.client import RemoteError, pair

    if out_file.exists():
        fail(f"{out_file} exists; pick another --out (it may hold another pairing)")
    try:
        device = pair(url, code, name)
    except RemoteError as exc:
        fail(str(exc))
        return
    device.save(out_file)
    out.print(
        f"paired as {escape(device.name)} ({device.role}); credentials in {escape(str(out_file))}",
        highlight=False,
    )
