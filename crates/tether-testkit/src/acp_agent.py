"""A scripted ACP agent for tether's tests: newline-delimited JSON-RPC on stdio.

What it does on each prompt is read from the file `acp-mode` in the session's cwd:
  promise      a tool call, then "done <promise>DONE</promise>"
  permission   asks permission to run `git push origin main`; says which option it got
  outside      asks permission to write /etc/passwd
  ignore       never answers the prompt and ignores session/cancel
  exit         exits in the middle of the turn
  malformed    writes a line that is not JSON and an unknown notification, then keeps its promise
  quit         keeps its promise, then exits once it has answered
It writes its pid (as /proc numbers it: in the sandbox's PID namespace its own pid is another
number) to `acp-agent.pid`, every decision it receives to `acp-decisions.txt`, and
when it received each (seconds since the epoch) to `acp-decided-at.txt`; each prompt's text to
`acp-prompts.txt` and, with its session, to `acp-prompted.jsonl`.
With ACP_LOAD_SESSION=1 in its environment it offers `session/load`, of any session a process of
it opened in that cwd (listed in `acp-session-ids.txt`); each load goes to `acp-loads.txt`.
"""
import json
import os
import sys
import threading
import time

lock = threading.Lock()
pending = {}
next_id = [100]
cwd = {}


def send(obj):
    with lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def update(session, upd):
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": session, "update": upd}})


def say(session, text):
    update(session, {"sessionUpdate": "agent_message_chunk",
                     "content": {"type": "text", "text": text}})


def request(method, params):
    with lock:
        rid = next_id[0]
        next_id[0] += 1
        ev = threading.Event()
        pending[rid] = [ev, None]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    ev.wait()
    return pending.pop(rid)[1]


def ask(session, title, kind, raw, locations=None):
    call = {"toolCallId": "p1", "title": title, "kind": kind, "rawInput": raw}
    if locations:
        call["locations"] = locations
    reply = request("session/request_permission", {
        "sessionId": session, "toolCall": call,
        "options": [
            {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]})
    outcome = reply.get("result", {}).get("outcome", {})
    chosen = outcome.get("optionId") or outcome.get("outcome")
    at = time.time()
    with open(os.path.join(cwd[session], "acp-decided-at.txt"), "a") as f:
        f.write(f"{at}\n")
    with open(os.path.join(cwd[session], "acp-decisions.txt"), "a") as f:
        f.write(f"{title}: {chosen}\n")
    return chosen


def prompt(rid, params):
    session = params["sessionId"]
    where = cwd[session]
    text = "".join(b.get("text", "") for b in params["prompt"])
    with open(os.path.join(where, "acp-prompts.txt"), "a") as f:
        f.write(text.replace("\n", " ") + "\n")
    with open(os.path.join(where, "acp-prompted.jsonl"), "a") as f:
        f.write(json.dumps({"session": session, "text": text}) + "\n")
    mode = open(os.path.join(where, "acp-mode")).read().strip()
    if mode == "ignore":
        return
    if mode == "exit":
        say(session, "half way")
        os._exit(3)
    if mode == "malformed":
        with lock:
            sys.stdout.write("{this is not json\n")
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "x/unknown", "params": {}}) + "\n")
            sys.stdout.flush()
    if mode == "permission":
        chosen = ask(session, "git push origin main", "execute", {"command": "git push origin main"})
        say(session, f"permission: {chosen}")
    elif mode == "outside":
        chosen = ask(session, "Write /etc/passwd", "edit", {"file_path": "/etc/passwd"},
                     [{"path": "/etc/passwd"}])
        say(session, f"permission: {chosen}")
    else:
        update(session, {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls",
                         "kind": "execute", "status": "in_progress"})
        update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})
        say(session, "done <promise>DONE</promise>")
    update(session, {"sessionUpdate": "usage_update", "used": None, "size": 1000,
                     "cost": {"amount": 0.5, "currency": "USD"}})
    send({"jsonrpc": "2.0", "id": rid, "result": {
        "stopReason": "end_turn",
        "usage": {"totalTokens": 30, "inputTokens": 20, "outputTokens": 10}}})
    if mode == "quit":
        time.sleep(0.05)
        os._exit(0)


def main():
    sessions = [0]
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method is None:
            with lock:
                slot = pending.get(msg.get("id"))
            if slot:
                slot[1] = msg
                slot[0].set()
            continue
        rid = msg.get("id")
        params = msg.get("params", {})
        if method == "initialize":
            capabilities = {"loadSession": True} if os.environ.get("ACP_LOAD_SESSION") else {}
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": 1, "agentCapabilities": capabilities,
                "agentInfo": {"name": "scripted-acp", "version": "1.0.0"}, "authMethods": []}})
        elif method == "session/new":
            sessions[0] += 1
            sid = f"s{os.getpid()}-{sessions[0]}"
            cwd[sid] = params["cwd"]
            with open(os.path.join(params["cwd"], "acp-session-ids.txt"), "a") as f:
                f.write(sid + "\n")
            with open(os.path.join(params["cwd"], "acp-agent.pid"), "w") as f:
                with open("/proc/self/stat") as stat:
                    f.write(stat.read().split()[0])
            with open(os.path.join(params["cwd"], "acp-sessions.jsonl"), "a") as f:
                f.write(json.dumps(params) + "\n")
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": sid}})
        elif method == "session/load" and os.environ.get("ACP_LOAD_SESSION"):
            sid = params["sessionId"]
            known = os.path.join(params["cwd"], "acp-session-ids.txt")
            with open(os.path.join(params["cwd"], "acp-loads.txt"), "a") as f:
                f.write(sid + "\n")
            if os.path.exists(known) and sid in open(known).read().split():
                cwd[sid] = params["cwd"]
                send({"jsonrpc": "2.0", "id": rid, "result": {}})
            else:
                send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32002, "message": "no such session"}})
        elif method == "session/prompt":
            threading.Thread(target=prompt, args=(rid, params), daemon=True).start()
        elif method == "session/cancel":
            pass
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})


main()
