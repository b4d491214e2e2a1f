"""The background warm-up (model/warmup.py): the SDK loads while the session starts, and the cyclic
garbage collector stays off until it has, then finds everything start-up made frozen (issue 22).
Each test runs in its own interpreter: freezing is for a whole process."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, sys
sys.path.insert(0, {src!r})
from vllm_bot.model import warmup
seen = []
def loader():
    seen.append(gc.isenabled())
    {body}
warmup.start(loader).join()
print("during:", seen, "after:", gc.isenabled(), "frozen:", gc.get_freeze_count() > 1000)
"""


def probe(body: str) -> str:
    code = PROBE.format(src=str(ROOT / "src"), body=body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_collector_is_off_while_start_up_loads_and_on_with_its_objects_frozen_after():
    assert "during: [False] after: True frozen: True" in probe("pass")


def test_a_failed_load_still_turns_the_collector_back_on():
    assert "during: [False] after: True frozen: True" in probe("raise ImportError('no openai')")
