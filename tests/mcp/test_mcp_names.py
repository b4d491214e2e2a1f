"""Public names for MCP tools: valid for every API, unique, stable."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vllm_bot.mcp.names import MAX_LEN, NAME_RE, NameTable, server_part, short_hash


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("github", "create_issue", "mcp__github__create_issue"),
        ("github", "create-issue", "mcp__github__create-issue"),
        ("git hub", "create issue", "mcp__git_hub__create_issue"),
        ("fs", "read.file", "mcp__fs__read_file"),
        ("my__srv", "x", "mcp__my_srv__x"),
        ("_srv_", "x", "mcp__srv__x"),
        ("db", "запрос", f"mcp__db__tool_{short_hash('запрос')}"),
        ("db", "run запрос", "mcp__db__run_______"),
        ("db", "", f"mcp__db__tool_{short_hash('')}"),
    ],
)
def test_name_table(server, tool, expected):
    assert NameTable().assign(server, tool) == expected


def test_server_without_valid_characters_gets_a_hash():
    assert server_part("日本") == f"server_{short_hash('日本')}"
    assert server_part("...") == f"server_{short_hash('...')}"


def test_long_names_are_cut_to_64_with_a_stable_hash():
    tool = "t" * 100
    name = NameTable().assign("srv", tool)
    assert len(name) == MAX_LEN and NAME_RE.match(name)
    assert name == f"mcp__srv__{'t' * (MAX_LEN - 10 - 9)}_{short_hash('srv', tool)}"
    assert NameTable().assign("srv", tool) == name  # same in another session


def test_long_server_name_keeps_room_for_the_tool():
    server = "a-very-long-server-name-from-a-config-file"
    name = NameTable().assign(server, "search")
    assert name == f"mcp__a-very-long-ser_{short_hash(server)}__search"


def test_names_that_only_differ_in_replaced_characters_stay_apart():
    table = NameTable()
    first = table.assign("fs", "read_file")
    second = table.assign("fs", "read.file")
    assert first == "mcp__fs__read_file"
    assert second == f"mcp__fs__read_file_{short_hash('fs', 'read.file')}"
    assert table.assign("fs", "read.file") == second  # asked again: same name


def test_long_names_with_a_common_prefix_stay_apart():
    table = NameTable()
    names = {table.assign("srv", "x" * 70 + str(i)) for i in range(20)}
    assert len(names) == 20 and all(len(n) == MAX_LEN for n in names)


def test_servers_that_sanitize_alike_get_distinct_parts_in_config_order():
    table = NameTable()
    assert table.server("a.b") == "a_b"
    assert table.server("a_b") == f"a_b_{short_hash('a_b')}"
    assert table.assign("a.b", "t") != table.assign("a_b", "t")


def test_separator_cannot_be_forged_by_tool_names():
    table = NameTable()
    assert table.assign("a", "b__c") != table.assign("a__b", "c")


def test_reserved_names_are_never_handed_out():
    table = NameTable(reserved=["mcp__s__t"])
    assert table.assign("s", "t") == f"mcp__s__t_{short_hash('s', 't')}"


@given(st.lists(st.tuples(st.text(max_size=40), st.text(max_size=90)), max_size=12, unique=True))
def test_every_name_is_valid_and_unique(pairs):
    table = NameTable(reserved=["read", "write", "edit", "exec"])
    for server, _ in pairs:
        table.server(server)
    names = [table.assign(server, tool) for server, tool in pairs]
    assert all(NAME_RE.match(n) for n in names)
    assert len(set(names)) == len(names)
    assert not {"read", "write", "edit", "exec"} & set(names)
