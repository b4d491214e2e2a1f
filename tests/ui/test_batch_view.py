"""A batch's progress and summary as the user sees them: plain lines off a terminal, a live rich view
on one (rendered here into a recording console), and tables."""

import io

from rich.console import Console

from vllm_bot.ui.batch_live import BatchLive
from vllm_bot.ui.batch_view import BatchLog, duration, format_table, print_table, status_text


def snapshot(**extra):
    snap = {
        "total": 10,
        "done": 4,
        "failed": 1,
        "running": [
            {"id": "fix-7", "iteration": 3, "seconds": 12.4},
            {"id": "fix-8", "iteration": 1, "seconds": 2.0},
        ],
        "finished": [
            {
                "id": "fix-1",
                "status": "passed",
                "passed": True,
                "iterations": 4,
                "prompt_tokens": 1000,
                "completion_tokens": 234,
                "wall_seconds": 9.5,
                "error": None,
            },
            {
                "id": "fix-2",
                "status": "timeout",
                "passed": False,
                "iterations": 9,
                "prompt_tokens": 5,
                "completion_tokens": 0,
                "wall_seconds": 60,
                "error": "killed\nafter 60 s",
            },
        ],
        "eta_seconds": 185.0,
        "elapsed_seconds": 30.0,
        "tokens_per_second": 412.4,
        "speed_source": "server",
        "cache_hit_rate": 0.78,
    }
    snap.update(extra)
    return snap


def test_status_line_says_done_running_failed_eta_speed_and_cache():
    assert (
        status_text(snapshot())
        == "done 4/10 · running 2 · failed 1 · ETA 3m05s · 412 tokens/s (server) · prefix cache 78%"
    )
    assert status_text(snapshot(eta_seconds=None, tokens_per_second=None, cache_hit_rate=None)).endswith(
        "ETA ?"
    )
    assert [duration(s) for s in (4.4, 61, 3725)] == ["4 s", "1m01s", "1h02m"]


def test_while_the_server_is_away_the_status_line_leads_with_the_pause():
    paused = {"seconds": 72, "retry_in": 16, "gives_up_in": 828}
    assert status_text(snapshot(paused=paused)).startswith(
        "PAUSED: the server has not answered for 1m12s · next try in 16 s · gives up in 13m48s · done 4/10"
    )


def test_plain_log_prints_each_finished_task_once():
    err = io.StringIO()
    log = BatchLog(err)
    log.refresh(snapshot())
    log.refresh(snapshot())
    lines = err.getvalue().splitlines()
    assert lines == [
        "[3/10] passed       fix-1 · 4 iterations · 1,234 tokens · 9.5 s",
        "[4/10] timeout      fix-2 · 9 iterations · 5 tokens · 60.0 s · killed\\x0aafter 60 s",
    ]


def test_live_view_renders_the_bar_the_status_and_the_tasks_in_flight():
    live = BatchLive()
    live.snap = snapshot()
    console = Console(record=True, width=100, file=io.StringIO())
    console.print(live._render())
    text = console.export_text()
    assert "done 4/10 · running 2 · failed 1" in text
    assert "fix-7  iteration 3  12 s" in text and "fix-8  iteration 1  2 s" in text


def test_tables_are_aligned():
    table = format_table(["task", "tokens"], [["a", "1,234"], ["longer", "5"]])
    assert table.splitlines() == ["task    tokens", "------  ------", "a        1,234", "longer       5"]
    out = io.StringIO()
    print_table("results", ["task"], [], ["no tasks"], out)
    assert out.getvalue() == "results\nno tasks\n"
