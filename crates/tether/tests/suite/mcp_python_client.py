"""An independent MCP client for `tether mcp`: the official Python SDK (`mcp>=2,<3`).

Usage: python_client.py <tether binary> <workspace dir>

Lists the tools, has a call answered with `tether answer` (run once the question shows up in
`tether questions --json`), cancels a call (the question must stay pending), and follows the
first conversation up with its thread_id. Prints one line per step; exits non-zero on failure.
"""

import json
import os
import subprocess
import sys
import time

import anyio
from mcp import Client, StdioServerParameters

TETHER, WORKSPACE = sys.argv[1], sys.argv[2]
PATIENCE = 20.0


def tether(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [TETHER, *args],
        cwd=WORKSPACE,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        stdin=subprocess.DEVNULL,
        check=False,
    )


async def pending_question(not_id: str | None = None) -> dict:
    """The first pending question (other than `not_id`), waited for."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        for q in json.loads(tether("questions", "--json").stdout or "[]"):
            if q["id"] != not_id:
                return q
        await anyio.sleep(0.02)
    raise AssertionError("no question appeared in `tether questions --json`")


def text(result) -> str:
    return result.content[0].text


def thread_id_of(reply: str) -> str:
    for line in reply.splitlines():
        if line.startswith("thread_id: "):
            return line.removeprefix("thread_id: ")
    raise AssertionError(f"no thread_id in {reply!r}")


async def answered(client: Client, question: str, answer: str, thread: str | None = None) -> str:
    """Calls ask_human and answers it from another process; returns the reply text."""
    args = {"question": question, "context": "python client", "confidence": 10}
    if thread is not None:
        args["thread_id"] = thread
    before = {q["id"] for q in json.loads(tether("questions", "--json").stdout or "[]")}
    progress = []

    async def on_progress(value, total, message):
        progress.append(value)

    async with anyio.create_task_group() as tg:
        replies = []

        async def call():
            replies.append(
                await client.call_tool(
                    "ask_human", args, read_timeout_seconds=PATIENCE, progress_callback=on_progress
                )
            )

        tg.start_soon(call)
        deadline = time.monotonic() + PATIENCE
        while True:
            fresh = [q for q in json.loads(tether("questions", "--json").stdout or "[]") if q["id"] not in before]
            if fresh:
                q = fresh[0]
                break
            assert time.monotonic() < deadline, "the question never appeared"
            await anyio.sleep(0.02)
        assert q["question"] == question, q
        assert q.get("thread_id") == thread, q
        done = tether("answer", q["id"], answer, "--as", "python")
        assert done.returncode == 0, done.stderr
    result = replies[0]
    assert not result.is_error, text(result)
    return text(result)


async def main() -> None:
    params = StdioServerParameters(command=TETHER, args=["mcp", "--progress-ms", "50"], cwd=WORKSPACE)
    async with Client(params, read_timeout_seconds=PATIENCE) as client:
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        assert names == ["ask_human", "cancel_goal", "complete_goal", "plan_status"], names
        ask = next(t for t in tools.tools if t.name == "ask_human")
        assert sorted(ask.input_schema["required"]) == ["confidence", "context", "question"], ask.input_schema
        print("list_tools: ok", names, "protocol", client.protocol_version)

        first = await answered(client, "Postgres or SQLite?", "SQLite")
        assert first.startswith("Human replied: SQLite\n"), first
        assert first.endswith("responder: python (via cli)"), first
        thread = thread_id_of(first)
        print("answered via tether answer: ok", thread)

        with anyio.move_on_after(PATIENCE) as scope:
            async with anyio.create_task_group() as tg:

                async def doomed():
                    await client.call_tool(
                        "ask_human",
                        {"question": "Ship on Friday?", "context": "", "confidence": 5},
                        read_timeout_seconds=PATIENCE,
                    )
                    raise AssertionError("a cancelled call was answered")

                tg.start_soon(doomed)
                q = await pending_question()
                tg.cancel_scope.cancel()
        assert not scope.cancelled_caught, "cancelling took too long"
        still = json.loads(tether("questions", "--json").stdout)
        assert [x["id"] for x in still] == [q["id"]], still
        assert still[0]["status"] == "pending", still
        print("cancelled: ok, still pending", q["id"])

        follow = await answered(client, "And the pool size?", "Ten.", thread=thread)
        assert follow.startswith("Human replied: Ten.\n"), follow
        assert thread_id_of(follow) == thread, follow
        print("follow-up in the same thread: ok", thread)

        status = await client.call_tool("plan_status", {})
        assert status.is_error, "no plan.md in this workspace"
        assert "plan.md does not exist" in text(status), text(status)
        print("plan_status: ok")


anyio.run(main)
