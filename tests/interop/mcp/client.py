"""`engram mcp` driven by a real MCP client: the official Python SDK (the
`mcp` package), as an agent framework would drive it.

The client starts `engram mcp` over stdio, lists the tools and checks that
their schemas come from the proto (descriptions, enums, no scope), then
calls every tool against a live Engram server and checks each answer — the
SDK also validates every successful result against the tool's output
schema. Any mismatch exits non-zero saying what was expected and what came
back. The last line printed is a JSON object of the ids created, for the
calling test to look up over gRPC.

Environment:
  ENGRAM_CLI        the `engram` binary (required)
  ENGRAM_SERVER     the server's URL, http://host:port (required)
  ENGRAM_NAMESPACE  the namespace the tools work in (required)
"""

import asyncio
import json
import os
import sys
import textwrap

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = [
    "remember",
    "search_memories",
    "build_context",
    "create_memory",
    "record_outcome",
    "start_episode",
    "append_steps",
    "complete_episode",
    "list_entities",
    "get_entity",
]

# Every call gets a deadline: a hung bridge fails the run instead of blocking it.
TIMEOUT = 20.0  # seconds


def expect(condition, message, got=None):
    """Stops the run with a clear message when `condition` is false."""
    if not condition:
        detail = "\n  got:\n" + textwrap.indent(str(got).rstrip(), "    ") if got is not None else ""
        sys.exit(f"mcp client: FAILED: {message}{detail}")


async def call(session, name, arguments):
    """Calls a tool that must succeed and returns its structured result."""
    result = await session.call_tool(name, arguments, read_timeout_seconds=TIMEOUT)
    expect(not result.is_error, f"{name} succeeds", result)
    expect(isinstance(result.structured_content, dict), f"{name} returns structured content", result)
    return result


async def run():
    engram = os.environ["ENGRAM_CLI"]
    namespace = os.environ["ENGRAM_NAMESPACE"]
    url = os.environ["ENGRAM_SERVER"]
    # readme:begin connect
    server = StdioServerParameters(
        command=engram,  # the `engram` command
        args=["mcp", "--namespace", namespace, "--project", "shop", "--agent", "mcp-agent"],
        env={"ENGRAM_SERVER": url},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            # readme:end connect
            expect(init.server_info.name == "engram", "the server calls itself engram", init)
            expect("build_context" in (init.instructions or ""), "instructions say how to use the tools", init)

            # The tools, described from the proto.
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            expect(sorted(tools) == sorted(TOOLS), f"the tools are {TOOLS}", sorted(tools))
            for tool in tools.values():
                expect("scope" not in tool.input_schema.get("properties", {}),
                       f"{tool.name}: the scope is not an argument", tool.input_schema)
                expect(tool.description, f"{tool.name} has a description", tool)
                expect(tool.output_schema and tool.output_schema.get("type") == "object",
                       f"{tool.name} has an output schema", tool)
            search = tools["search_memories"]
            expect(search.description.startswith("Finds the memories most relevant to a query"),
                   "search_memories is described by the RPC's comment", search.description)
            expect(search.annotations and search.annotations.read_only_hint is True,
                   "search_memories is read-only", search.annotations)
            memory = tools["create_memory"].input_schema["properties"]["memory"]
            expect("MEMORY_TYPE_LESSON" in memory["properties"]["memory_type"]["enum"],
                   "memory_type lists the enum's values", memory["properties"]["memory_type"])
            expect(memory["properties"]["content"].get("description"),
                   "memory.content is described by its comment", memory["properties"]["content"])

            # create, search, context.
            created = await call(session, "create_memory", {
                "memory": {
                    "memory_type": "MEMORY_TYPE_LESSON",
                    "content": "Checkout deploys failed because the orders migration locked the table",
                    "tags": ["deploy", "postgres"],
                    "importance": 0.8,
                },
            })
            lesson = created.structured_content["memory"]
            expect(created.structured_content["result"] == "WRITE_RESULT_CREATED", "the lesson is created",
                   created.structured_content)
            expect(lesson["scope"]["namespace"] == namespace and lesson["scope"]["project_id"] == "shop",
                   "the lesson is stored in the command's scope", lesson)

            # readme:begin search
            found = await session.call_tool("search_memories", {"query": "why did the deploy fail?", "limit": 5})
            hits = found.structured_content["hits"]  # SearchMemoriesResponse, as JSON
            context = await session.call_tool("build_context", {"query": "deploy checkout", "token_budget": 400})
            text = context.content[0].text  # the markdown block for the prompt
            # readme:end search
            expect(not found.is_error and hits and hits[0]["memory"]["id"] == lesson["id"],
                   "search finds the lesson first", found)
            expect(not context.is_error, "build_context succeeds", context)
            expect("orders migration" in text, "the context block holds the lesson", text)
            expect(context.structured_content["text"] == text, "the text is the context block", context)

            # remember: the rules classifier keeps a preference.
            remembered = await call(session, "remember", {
                "transcript": "User: I prefer tabs over spaces in every Go file.",
                "mode": "CLASSIFY_MODE_RULES",
            })
            decision = remembered.structured_content
            expect(decision["decision"]["should_store"] is True, "the preference is worth keeping", decision)
            expect(decision["decision"]["memory_type"] == "MEMORY_TYPE_PREFERENCE", "it is a preference", decision)
            preference = decision["memory"]

            # record_outcome.
            outcome = await call(session, "record_outcome", {
                "task": "deploy checkout",
                "task_type": "deploy",
                "strategy": "run the migration before the deploy",
                "success": True,
            })
            expect(outcome.structured_content["outcome"]["id"], "the outcome is recorded", outcome)

            # An episode: start, append steps, complete.
            episode = (await call(session, "start_episode", {
                "task_id": "deploy-checkout",
                "description": "Deploy checkout with the new orders migration",
            })).structured_content
            expect(episode["status"] == "EPISODE_STATUS_RUNNING", "the episode runs", episode)
            steps = [
                {"step_number": 1, "tool": "bash", "action": "run migration", "result": "STEP_RESULT_OK"},
                {"step_number": 2, "tool": "bash", "action": "deploy", "result": "STEP_RESULT_OK"},
            ]
            appended = await call(session, "append_steps", {"episode_id": episode["id"], "steps": steps})
            expect(appended.structured_content["step_count"] == 2, "both steps are stored", appended)
            again = await call(session, "append_steps", {"episode_id": episode["id"], "steps": steps})
            expect(again.structured_content["step_count"] == 2, "sending them again stores nothing twice", again)
            completed = await call(session, "complete_episode", {
                "episode_id": episode["id"],
                "outcome": {"score": 0.9, "success": True, "summary": "deployed after the migration"},
            })
            expect(completed.structured_content["episode"]["status"] == "EPISODE_STATUS_COMPLETED",
                   "the episode is completed", completed)

            # The entities the memories name, and what is known of one.
            await call(session, "create_memory", {
                "memory": {"memory_type": "MEMORY_TYPE_FACT", "content": "Priya Patel owns the checkout service."},
            })
            listed = await call(session, "list_entities", {"entity_types": ["ENTITY_TYPE_PERSON"]})
            names = [e["name"] for e in listed.structured_content["entities"]]
            expect(names == ["Priya Patel"], "list_entities names the person", listed.structured_content)
            priya = await call(session, "get_entity", {"entity": "priya patel"})
            contents = [m["content"] for m in priya.structured_content["memories"]]
            expect(contents == ["Priya Patel owns the checkout service."], "get_entity reads her memories",
                   priya.structured_content)

            # A refused call is a tool error with readable field violations.
            # readme:begin errors
            bad = await session.call_tool("create_memory", {"memory": {"content": "", "importance": 3}})
            if bad.is_error:
                error = bad.structured_content  # also bad.content[0].text, for the model
                violations = {v["field"]: v["description"] for v in error.get("field_violations", [])}
            # readme:end errors
            expect(bad.is_error, "a blank memory with importance 3 is refused", bad)
            expect(error["code"] == "INVALID_ARGUMENT", "the refusal is INVALID_ARGUMENT", error)
            expect(violations.get("memory.importance") == "must be between 0 and 1 (got 3)"
                   and "memory.content" in violations,
                   "the violations name memory.content and memory.importance", error)
            expect("memory.importance:" in bad.content[0].text, "the model reads the violations", bad.content)

            # Arguments outside the schema, and a scope, are tool errors too.
            stray = await session.call_tool("search_memories", {"query": "x", "scope": {"namespace": "other"}},
                                            read_timeout_seconds=TIMEOUT)
            expect(stray.is_error and "scope" in stray.content[0].text, "the scope cannot be chosen", stray)
            unknown = await session.call_tool("search_memories", {"query": "x", "nonsense": 1},
                                              read_timeout_seconds=TIMEOUT)
            expect(unknown.is_error and "nonsense" in unknown.content[0].text, "unknown fields are refused",
                   unknown)

    print(json.dumps({"lesson": lesson["id"], "preference": preference["id"], "episode": episode["id"]}))


def main():
    asyncio.run(asyncio.wait_for(run(), timeout=120))
    print("mcp client: ok")


if __name__ == "__main__":
    main()
