import json

from vllm_bot.model.deltas import ToolCallAssembler


def head(i, name, id_="chatcmpl-tool-%d"):
    return {
        "index": i,
        "id": id_ % i if id_ and "%d" in id_ else id_,
        "type": "function",
        "function": {"name": name},
    }


def frag(i, text, nulls=False):
    entry = {"index": i, "function": {"arguments": text}}
    if nulls:
        entry.update({"id": None, "type": None})
        entry["function"]["name"] = None
    return entry


def assemble(*chunks):
    a = ToolCallAssembler()
    for entries in chunks:
        a.feed(entries)
    return a.finish()


def test_fragments_concatenated_and_id_name_from_first_delta():
    (call,) = assemble([head(0, "read")], [frag(0, '{"pa')], [frag(0, 'th": "a.py"}')])
    assert call.name == "read" and call.id == "chatcmpl-tool-0"
    assert call.arguments == {"path": "a.py"} and call.error is None


def test_interleaved_calls_and_several_entries_per_chunk():
    calls = assemble(
        [head(0, "read"), head(1, "exec")],
        [frag(1, '{"command":'), frag(0, '{"path":')],
        [frag(0, '"x"}'), frag(1, ' "ls"}')],
    )
    assert [(c.name, c.arguments) for c in calls] == [("read", {"path": "x"}), ("exec", {"command": "ls"})]


def test_name_and_all_arguments_for_one_index_in_one_chunk():
    (call,) = assemble([head(0, "write"), frag(0, '{"path": "a", '), frag(0, '"content": "b"}')])
    assert call.arguments == {"path": "a", "content": "b"}


def test_explicit_nulls_are_absent():
    (call,) = assemble([head(0, "read")], [frag(0, '{"path": "a"}', nulls=True)])
    assert call.id == "chatcmpl-tool-0" and call.name == "read" and call.arguments == {"path": "a"}


def test_missing_and_duplicate_ids_are_synthesized():
    calls = assemble(
        [head(0, "read", None), head(1, "read", "same"), head(2, "read", "same")],
        [frag(0, "{}"), frag(1, "{}"), frag(2, "{}")],
    )
    ids = [c.id for c in calls]
    assert all(ids) and len(set(ids)) == 3 and ids[1] == "same"


def test_empty_or_missing_arguments_mean_empty_object():
    assert assemble([head(0, "read")])[0].arguments == {}
    assert assemble([head(0, "read")], [frag(0, "")])[0].arguments == {}


def test_duplicated_tail_recovered_from_last_fragment():
    args = json.dumps({"path": "a.py", "content": "x"})
    (call,) = assemble([head(0, "write")], [frag(0, args[:10])], [frag(0, args[10:])], [frag(0, args)])
    assert call.arguments == {"path": "a.py", "content": "x"} and call.error is None
    assert "repaired" in call.metadata


def test_partial_prefix_then_full_resend_recovered():
    (call,) = assemble([head(0, "read")], [frag(0, '{"path": "a.py"')], [frag(0, '{"path": "a.py"}')])
    assert call.arguments == {"path": "a.py"}


def test_invalid_json_is_an_error_not_empty_args():
    (call,) = assemble([head(0, "read")], [frag(0, '{"path": ')])
    assert call.error and "not valid JSON" in call.error and call.arguments == {}


def test_non_object_arguments_are_an_error():
    (call,) = assemble([head(0, "read")], [frag(0, "[1, 2]")])
    assert call.error and "JSON object" in call.error


def test_double_encoded_arguments():
    (call,) = assemble([head(0, "read")], [frag(0, json.dumps(json.dumps({"path": "a"})))])
    assert call.arguments == {"path": "a"}


def test_missing_index_continues_last_call_or_starts_new_on_new_id():
    calls = assemble(
        [{"id": "a", "function": {"name": "read"}}],
        [{"function": {"arguments": '{"path": "x"}'}}],
        [{"id": "b", "function": {"name": "exec", "arguments": '{"command": "ls"}'}}],
    )
    assert [(c.id, c.name) for c in calls] == [("a", "read"), ("b", "exec")]


def test_no_name_is_an_error():
    (call,) = assemble([frag(0, "{}")])
    assert call.error and "name" in call.error
