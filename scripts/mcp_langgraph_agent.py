"""A LangGraph agent that takes the vault's tools over MCP with `langchain-mcp-adapters`.

The README's example, run as it is by tests/test_mcp_agent.py (in `.venv-mcp-agent`: the
adapters need mcp<2, the sidecar mcp>=2.3; `pip install --group mcp-agent`). It starts
`vault-rag mcp` over stdio, gives its tools to a ReAct agent and prints the run's messages as
JSON on stdout.

    python scripts/mcp_langgraph_agent.py --vault PATH "How do I enable Nanite?"
        [--vault-rag /path/to/vault-rag] [--base-url URL] [--model NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


async def run(args: argparse.Namespace) -> dict[str, Any]:
    client = MultiServerMCPClient(
        {
            "vault": {
                "transport": "stdio",
                "command": args.vault_rag,
                "args": ["mcp", "--vault", args.vault],
                "env": dict(os.environ),  # the vault-rag settings (VAULT_RAG_*) pass through
            }
        }
    )
    tools = await client.get_tools()
    model = ChatOpenAI(model=args.model, base_url=args.base_url, max_retries=0)
    agent = create_react_agent(model, tools)
    result = await agent.ainvoke({"messages": [("user", args.question)]})
    return {
        "tools": sorted(t.name for t in tools),
        "messages": [
            {
                "type": m.type,
                "name": getattr(m, "name", None),
                "content": m.content,
                "tool_calls": [c["name"] for c in getattr(m, "tool_calls", None) or []],
            }
            for m in result["messages"]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question")
    parser.add_argument("--vault", required=True)
    parser.add_argument("--vault-rag", default="vault-rag", help="the vault-rag command")
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible server")
    parser.add_argument("--model", default="gpt-4o-mini")
    output = asyncio.run(run(parser.parse_args()))
    print(json.dumps(output, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main()
