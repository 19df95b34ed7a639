"""The README's API quickstart, line by line, exactly as written, with curl and jq against a live
server (pytest-django's live_server: the real WSGI stack, the real database, real MiniLM
embeddings for the memory lines). The chat replies come from the scripted FAKE model: this test
is about the commands a client types and what they return, not about what the coach says.

Each line runs in one bash session (variables carry over, as in a terminal); a separator after
each line lets every line's output and exit status be checked on its own."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
SEPARATOR = "@@quickstart-line-done@@"


def quickstart_lines() -> list[str]:
    text = README.read_text()
    block = text.split("<!-- quickstart:begin -->", 1)[1].split("<!-- quickstart:end -->", 1)[0]
    body = block.split("```sh", 1)[1].rsplit("```", 1)[0]
    return [line for line in body.strip().splitlines() if line.strip()]


def run_lines(lines: list[str], env: dict[str, str]) -> list[tuple[int, str]]:
    script = "".join(f"{line}\necho; echo {SEPARATOR} $?\n" for line in lines)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=600, check=False)
    chunks = done.stdout.split(SEPARATOR)
    results = []
    for i, nxt in enumerate(chunks[1:]):
        out = chunks[i] if i == 0 else chunks[i].split("\n", 1)[1]  # drop the previous line's status
        results.append((int(nxt.split()[0]), out))
    assert len(results) == len(lines), (done.stdout[-2000:], done.stderr[-2000:])
    return [(status, out.strip()) for status, out in results]


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="the quickstart needs curl and jq")
def test_readme_quickstart_runs_line_by_line(live_server, fake_model, settings):
    from core.identity import services as identity_services
    from core.llm.providers.fake import Scripted
    fake_model.default = lambda request: Scripted(text="Great, let's plan your first week.")
    settings.BLOOM_MEMORY_EXTRACTION = False  # no worker here; memory is written by the API lines

    client = identity_services.api_client_create(name="quickstart")
    _, token = identity_services.api_token_create(client=client, name="quickstart")
    lines = quickstart_lines()
    assert len(lines) == 9, lines
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "BLOOM": live_server.url, "TOKEN": token}
    results = run_lines(lines, env)
    for (status, out), line in zip(results, lines, strict=True):
        assert status == 0, f"exit {status}: {line}\n{out}"
    outputs = [out for _, out in results]
    print("\n".join(f"$ {line}\n{out}" for line, out in zip(lines, outputs, strict=True)))  # the closing note

    learner = uuid.UUID(outputs[1])  # the learner's id is a UUID
    uuid.UUID(outputs[2])  # the conversation's id is a UUID too (never the database key)
    reply = json.loads(outputs[3])
    assert reply["specialist"] and reply["reply"]
    events = re.findall(r"^event: (\w+)$", outputs[4], flags=re.M)
    assert events and events[-1] == "final" and set(events) <= {"token", "final"}, outputs[4]
    done = json.loads(outputs[4].rsplit("data: ", 1)[1])
    assert uuid.UUID(done["message_id"]) and uuid.UUID(done["reply_to"]) and done["trace_id"]  # public ids
    created = json.loads(outputs[5])["created"]
    assert len(created) == 1
    hit = json.loads(outputs[6])
    assert hit["fact_id"] == created[0] and "train in the morning" in hit["content"]
    uuid.UUID(hit["fact_id"])
    session = json.loads(outputs[7])
    assert (session["week_start"], session["status"]) == ("2030-01-07", "planned")
    uuid.UUID(session["id"])
    plan = json.loads(outputs[8])
    assert plan == {"week_start": "2030-01-07", "sessions": [{"id": session["id"], "topic": "verbs",
                                                             "status": "planned"}]}

    from coaching.models import Learner, PlannedSession

    assert Learner.objects.get(research_id=learner).client_id == client.pk
    assert PlannedSession.objects.filter(plan__learner__research_id=learner).count() == 1


def test_readme_mcp_servers_block_is_a_command_the_server_accepts():
    from memory.management.commands.mcp_memory import Command

    text = README.read_text()
    block = text.split("<!-- mcp:begin -->", 1)[1].split("<!-- mcp:end -->", 1)[0]
    config = json.loads(block.split("```json", 1)[1].rsplit("```", 1)[0])
    server = config["mcpServers"]["bloom-memory"]
    assert server["command"].endswith("/.venv/bin/python") and server["args"][0].endswith("/manage.py")
    assert server["args"][1] == "mcp_memory" and {"DATABASE_URL", "BLOOM_VAR_DIR"} <= set(server["env"])
    options = Command().create_parser("manage.py", "mcp_memory").parse_args(server["args"][2:])
    assert isinstance(options.learner, uuid.UUID) and options.client is None
