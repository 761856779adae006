"""The README's Python section: every snippet it quotes is a region of this
test (``readme:begin NAME`` ... ``readme:end NAME``), which runs against a
real server. tests/tests/e2e/readme.rs checks that the README's copies match."""

from __future__ import annotations

from conftest import Server


def test_the_readme_python_section_runs(server: Server) -> None:
    address = server.address
    # readme:begin connect
    from engram_client import Engram, EngramError, Scope, StatusCode

    engram = Engram(address)  # "host:port"; api_key=..., tls=True when the server needs them
    shop = Scope(namespace="demo", project_id="shop")
    # readme:end connect

    # readme:begin create-search
    lesson = "Checkout deploys failed because the orders migration locked the table"
    created = engram.memory.create(shop, "lesson", lesson, tags=["deploy"], importance=0.8)
    print(created.memory.id)  # a UUIDv7; created.result: CREATED, or MERGED into an identical one

    hits = engram.memory.search(shop, "why did the deploy fail?", limit=5).hits
    assert hits[0].memory.content == lesson
    # readme:end create-search

    # readme:begin context
    context = engram.memory.context(shop, query="deploying checkout", token_budget=200)
    assert lesson in context.text  # markdown for the agent's system prompt
    # readme:end context

    # readme:begin errors
    try:
        engram.memory.create(shop, "fact", "", importance=3)
    except EngramError as error:
        assert error.code == StatusCode.INVALID_ARGUMENT
        # Every offending field, as data.
        assert [v.field for v in error.field_violations] == ["memory.content", "memory.importance"]
        print(error.field_violations[1].description)  # must be between 0 and 1 (got 3)
    else:
        raise AssertionError("a blank memory with importance 3 is refused")
    # readme:end errors
    engram.close()
