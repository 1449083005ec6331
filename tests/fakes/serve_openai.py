"""The wire fake of an OpenAI-compatible server as a process of its own, for the plugin's
Chromium test (obsidian-plugin/tests/e2e/models.e2e.test.ts): it lists `--model`s at
`/v1/models` and answers every chat request with a reply naming the model that was asked, so
the test sees which model answered. Prints `listening <base_url>` and runs until stdin closes.

    python tests/fakes/serve_openai.py --model llama3.2:3b --model qwen2.5:7b
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fakes.openai_server import ChatReply, FakeOpenAIServer


def reply_naming_the_model(body: dict[str, Any]) -> ChatReply:
    return ChatReply(f"Answered by {body.get('model')}: Lumen bounces light between surfaces [1].")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", action="append", default=[])
    args = parser.parse_args()
    with FakeOpenAIServer(models=args.model or ("fake-chat",)) as server:
        server.default_chat_reply = reply_naming_the_model
        print(f"listening {server.base_url}", flush=True)
        sys.stdin.read()  # until the test closes stdin (or kills the process)


if __name__ == "__main__":
    main()
