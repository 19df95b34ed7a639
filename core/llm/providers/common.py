"""Helpers shared by providers: message checks, JSON/schema parsing, tool calls through a schema."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from core.llm.providers.base import ChatRequest, Done, Token
from core.llm.types import ChatResult, LLMError, LLMInvalidOutput, ToolCall, ToolSpec

ROLES = ("system", "user", "assistant", "tool")


def validate_messages(messages: Any) -> None:
    """Bad input is the caller's bug: fail before any model time is spent, with a clear message."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ValueError(f"messages[{i}] must be a dict, got {type(message).__name__}")
        if message.get("role") not in ROLES:
            raise ValueError(f"messages[{i}].role must be one of {', '.join(ROLES)}, got {message.get('role')!r}")
        content = message.get("content", "")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"messages[{i}].content must be a string")


def validate_against_schema(value: Any, schema: dict) -> None:
    """Grammar-constrained decoding makes this hold already on llama.cpp; Ollama servers differ,
    so the shape is checked in code either way."""
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema ships with the stack (mcp depends on it)
        return
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        raise LLMInvalidOutput(f"output does not match the schema: {exc.message}") from None
    except jsonschema.SchemaError as exc:
        raise ValueError(f"invalid JSON schema: {exc.message}") from None


def parse_json_output(text: str, schema: dict | None) -> Any:
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise LLMInvalidOutput(f"model output is not valid JSON ({exc}): {text[:200]!r}") from None
    if schema is not None:
        validate_against_schema(value, schema)
    return value


def tool_choice_schema(tools: list[ToolSpec]) -> dict:
    """Constrain output to either tool calls (names from an enum, arguments per tool schema) or a
    plain answer. The model chooses which; code parses and validates it."""
    call_variants = [
        {
            "type": "object",
            "properties": {"name": {"type": "string", "enum": [tool.name]},
                           "arguments": tool.parameters or {"type": "object"}},
            "required": ["name", "arguments"],
        }
        for tool in tools
    ]
    return {
        "anyOf": [
            {"type": "object",
             "properties": {"tool_calls": {"type": "array", "items": {"anyOf": call_variants}, "minItems": 1}},
             "required": ["tool_calls"]},
            {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]},
        ]
    }


def tool_system_prompt(tools: list[ToolSpec]) -> str:
    lines = ["You can call tools. Available tools:"]
    for tool in tools:
        lines.append(f"- {tool.name}: {tool.description} Arguments schema: {json.dumps(tool.parameters)}")
    lines.append('Reply with JSON only: {"tool_calls": [{"name": ..., "arguments": {...}}]} to call tools, '
                 'or {"answer": "..."} to answer the user directly.')
    return "\n".join(lines)


def parse_tool_output(text: str, tools: list[ToolSpec]) -> tuple[str, list[ToolCall]]:
    """(answer text, tool calls). Unknown tool names or arguments off-schema are invalid output."""
    value = parse_json_output(text, None)
    if not isinstance(value, dict):
        raise LLMInvalidOutput(f"tool output must be a JSON object, got {type(value).__name__}")
    if "tool_calls" in value:
        calls = value["tool_calls"]
        if not isinstance(calls, list) or not calls:
            raise LLMInvalidOutput("tool_calls must be a non-empty list")
        return "", [check_tool_call(call, tools, index=i) for i, call in enumerate(calls)]
    if isinstance(value.get("answer"), str):
        return value["answer"], []
    raise LLMInvalidOutput(f"expected 'tool_calls' or 'answer' in tool output: {text[:200]!r}")


def check_tool_call(call: Any, tools: list[ToolSpec], *, index: int, call_id: str = "") -> ToolCall:
    by_name = {tool.name: tool for tool in tools}
    if not isinstance(call, dict):
        raise LLMInvalidOutput(f"tool call {index} is not an object")
    name = call.get("name")
    if name not in by_name:
        raise LLMInvalidOutput(f"tool call {index} names unknown tool {name!r} (known: {', '.join(by_name)})")
    arguments = call.get("arguments") or {}
    if isinstance(arguments, str):  # some servers send arguments as a JSON string
        arguments = parse_json_output(arguments, None)
    if not isinstance(arguments, dict):
        raise LLMInvalidOutput(f"tool call {index} arguments must be an object")
    if by_name[name].parameters:
        validate_against_schema(arguments, by_name[name].parameters)
    return ToolCall(id=call_id or f"call_{index}", name=name, arguments=arguments)


def flatten_tool_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For backends without native tool roles (llama.cpp chat templates vary): tool results become
    user turns and earlier assistant tool calls become their JSON, so the model sees the loop."""
    flat: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        content = message.get("content") or ""
        if role == "tool":
            name = message.get("name") or message.get("tool_name") or "tool"
            flat.append({"role": "user", "content": f"Tool result from {name}: {content}"})
        elif role == "assistant" and message.get("tool_calls"):
            calls = [{"name": c.get("name") or c.get("function", {}).get("name"),
                      "arguments": c.get("arguments") or c.get("function", {}).get("arguments") or {}}
                     for c in message["tool_calls"]]
            flat.append({"role": "assistant", "content": json.dumps({"tool_calls": calls})})
        else:
            flat.append({"role": role, "content": content})
    return flat


# --- shared by the providers that constrain output with a JSON schema (llama.cpp, OpenAI-compatible)
def grammar_request(request: ChatRequest) -> tuple[list[dict[str, Any]], dict | None]:
    """The messages to send and the schema to constrain the output with. Tools become a schema
    choice between tool calls and an answer, so every server that constrains JSON can call tools;
    code parses and validates the choice."""
    messages = flatten_tool_messages(request.messages)
    schema = request.schema
    if request.tools:
        messages = [{"role": "system", "content": tool_system_prompt(request.tools)}, *messages]
        schema = tool_choice_schema(request.tools)
    return messages, schema


def structured_events(result: ChatResult, text: str, request: ChatRequest) -> Iterator[Token | Done]:
    """The last events of a generation: tool calls or schema output parsed into `result` (a tool
    call's plain answer is emitted as one token: JSON fragments are useless to a reader)."""
    if request.tools:
        result.text, result.tool_calls = parse_tool_output(text, request.tools)
        if result.tool_calls:
            result.finish_reason = "tool_calls"
        if result.text:
            yield Token(result.text)
    elif request.schema is not None:
        result.parsed = parse_json_output(text, request.schema)
    yield Done(result)


def result_of(events: Iterator[Token | Done], who: str) -> ChatResult:
    """The non-streaming call: drain the stream, return its result."""
    for event in events:
        if isinstance(event, Done):
            return event.result
    raise LLMError(f"{who} stream ended without a result")  # pragma: no cover
