"""`vllm-bot acp` driven by the official Python SDK's client (a client we did not write), against the
scripted vLLM server: initialize, a new session, a prompt that reads, edits (asked and granted), runs a
command and answers; a cancel mid-stream; the saved session loaded in a new process."""

import asyncio
from pathlib import Path
from typing import Any

import acp  # the optional extra (pip install -e '.[acp]'); the test extra has it
from acp.schema import AllowedOutcome, ClientCapabilities, RequestPermissionResponse
from acp_support import ANSWER, COMMAND, agent_command, agent_env, make_workspace, slow_reply, task_script

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply


class Editor:
    """A client that records every update and answers permission questions from a list."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.updates: list[Any] = []
        self.questions: list[Any] = []
        self.first_words = asyncio.Event()

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.questions.append((tool_call, options))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answers.pop(0))
        )

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)
        if update.session_update == "agent_message_chunk":
            self.first_words.set()

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))


async def session(editor: Editor, base_url: str, workspace: Path, job):
    async with acp.spawn_agent_process(editor, *agent_command(base_url), env=agent_env(), cwd=workspace) as (
        conn,
        process,
    ):
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        result = await job(conn, init)
    assert await process.wait() == 0
    return result


def test_a_prompt_reads_edits_with_permission_runs_and_answers_then_cancel_and_load(tmp_path):
    ws = make_workspace(tmp_path)
    editor = Editor(["yes", "always"])

    async def work(conn, init):
        caps = init.agent_capabilities
        assert init.protocol_version == 1 and caps.load_session
        assert caps.prompt_capabilities.embedded_context and not caps.prompt_capabilities.image
        assert caps.mcp_capabilities.http and not caps.mcp_capabilities.sse
        new = await conn.new_session(cwd=str(ws), mcp_servers=[])
        assert [m.id for m in new.modes.available_modes] == ["ask", "auto-edit", "full-auto", "plan"]
        assert new.modes.current_mode_id == "auto-edit"
        model = next(o for o in new.config_options if o.id == "model")
        assert model.category == "model" and model.current_value == server.model
        await conn.set_session_mode(session_id=new.session_id, mode_id="ask")  # every change asks
        done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("fix add")])
        assert done.stop_reason == "end_turn"
        editor.first_words.clear()
        streaming = asyncio.ensure_future(
            conn.prompt(session_id=new.session_id, prompt=[acp.text_block("explain")])
        )
        await asyncio.wait_for(editor.first_words.wait(), 30)
        await conn.cancel(session_id=new.session_id)
        cancelled = await asyncio.wait_for(streaming, 30)
        return new.session_id, cancelled.stop_reason

    with FakeVLLM([*task_script(), slow_reply()]) as server:
        editor.first_words = asyncio.Event()
        session_id, stop = asyncio.run(_with_first_words(editor, session(editor, server.base_url, ws, work)))
        server.assert_done()
    assert stop == "cancelled"
    assert (ws / "app.py").read_text() == "def add(a, b):\n    return a + b\n"

    assert "Look first." in editor.text("agent_thought_chunk")
    assert editor.text().startswith(f"Reading.{ANSWER}")
    started = editor.of("tool_call")
    assert [(c.kind, c.title) for c in started] == [
        ("read", "Read app.py"),
        ("edit", "Edit app.py"),
        ("execute", f"$ {COMMAND}"),
    ]
    (edit_call, edit_options), (exec_call, _) = editor.questions
    assert [(o.option_id, o.kind) for o in edit_options] == [
        ("yes", "allow_once"),
        ("always", "allow_always"),
        ("instead", "reject_once"),
        ("no", "reject_once"),
    ]
    diff = edit_call.content[0]
    assert diff.type == "diff" and diff.path == str(ws / "app.py")
    assert (diff.old_text, diff.new_text) == (
        "def add(a, b):\n    return a - b\n",
        "def add(a, b):\n    return a + b\n",
    )
    assert exec_call.title == "Run this command?"
    finished = {
        u.tool_call_id: u for u in editor.of("tool_call_update") if u.status in ("completed", "failed")
    }
    assert [u.status for u in finished.values()] == ["completed"] * 3
    assert "5" in finished[started[2].tool_call_id].raw_output
    assert editor.of("usage_update") and editor.of("usage_update")[-1].size == 32768

    replayed = Editor([])

    async def load(conn, init):
        await conn.load_session(cwd=str(ws), session_id=session_id, mcp_servers=[])

    with FakeVLLM([]) as server:
        asyncio.run(session(replayed, server.base_url, ws, load))
    assert [u.content.text for u in replayed.of("user_message_chunk")] == ["fix add", "explain"]
    assert ANSWER in replayed.text()
    assert [u.status for u in replayed.of("tool_call_update")] == ["completed"] * 3


async def _with_first_words(editor: Editor, job):
    editor.first_words = asyncio.Event()  # bound to this event loop
    return await job


def test_without_forms_instead_ends_the_turn_and_the_next_prompt_is_the_instruction(tmp_path):
    """An editor that cannot show a form: "No, and tell it what to do instead" ends the turn; the
    user's next message, verbatim, is what the model reads next."""
    ws = make_workspace(tmp_path)
    editor = Editor(["instead"])
    instead = "Don't delete build/; run `git clean -n` and show me."

    def reads_the_instruction(body):
        refused, said = body["messages"][-2:]
        assert refused["role"] == "tool" and "the user declined this exec call." in refused["content"]
        assert said == {"role": "user", "content": instead}

    async def work(conn, init):
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        first = await conn.prompt(session_id=sid, prompt=[acp.text_block("clean up")])
        second = await conn.prompt(session_id=sid, prompt=[acp.text_block(instead)])
        return first.stop_reason, second.stop_reason

    script = [
        Reply(calls=[Call("exec", {"command": "rm -rf build"})]),
        Reply(content="OK.", expect=reads_the_instruction),
    ]
    with FakeVLLM(script) as server:
        stops = asyncio.run(session(editor, server.base_url, ws, work))
        server.assert_done()
    assert stops == ("end_turn", "end_turn")
    assert [o.option_id for o in editor.questions[0][1]] == ["yes", "always", "instead", "no"]
    assert editor.text().endswith("OK.")


def test_plan_mode_the_task_list_as_a_plan_and_the_plan_approved_in_the_editor(tmp_path):
    """Plan mode is a session mode; the task list arrives as an ACP plan; present_plan asks in the
    editor, and approving it leaves plan mode (the editor hears of the new mode) and the work goes on."""
    ws = make_workspace(tmp_path)
    editor = Editor(["yes"])
    steps = [{"text": "Fix add()", "status": "in_progress"}, {"text": "Check it", "status": "pending"}]
    plan = "1. In app.py, make add() return a + b.\n2. Check with python3 -c."
    script = [
        Reply(calls=[Call("update_plan", {"steps": steps})]),
        Reply(calls=[Call("present_plan", {"plan": plan})]),
        Reply(calls=[Call("edit", {"path": "app.py", "oldText": "a - b", "newText": "a + b"})]),
        Reply(content=ANSWER),
    ]

    async def work(conn, init):
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        return (await conn.prompt(session_id=sid, prompt=[acp.text_block("fix add")])).stop_reason

    with FakeVLLM(script) as server:
        stop = asyncio.run(session(editor, server.base_url, ws, work))
        server.assert_done()
    assert stop == "end_turn"
    (shown,) = editor.of("plan")
    assert [(e.content, e.status) for e in shown.entries] == [
        ("Fix add()", "in_progress"),
        ("Check it", "pending"),
    ]
    ((question, options),) = editor.questions
    assert question.title == "Approve the plan?" and question.content[0].content.text == plan
    assert [o.name for o in options][:2] == [
        "Yes, and carry it out in auto-edit mode",
        "Yes, and carry it out in ask mode",
    ]
    assert [u.current_mode_id for u in editor.of("current_mode_update")] == ["auto-edit"]
    assert (ws / "app.py").read_text() == "def add(a, b):\n    return a + b\n"
