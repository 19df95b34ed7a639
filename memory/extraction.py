"""Prompts and schemas for the two model jobs memory has: extracting facts from a learner turn and
writing a summary. The model writes text; code validates everything (see memory.rules)."""

from __future__ import annotations

from typing import Any

from memory import conf
from memory.rules import FACT_TYPES

FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": conf.MAX_FACTS_PER_MESSAGE,
            "items": {
                "type": "object",
                "properties": {
                    "fact_type": {"type": "string", "enum": list(FACT_TYPES)},
                    # No maxLength here: a long fact is cut by code (rules.validate_fact), not
                    # turned into a parse_error that loses the whole message.
                    "content": {"type": "string"},
                    # Lenient on purpose: a fact is not lost over its confidence; code clamps
                    # numbers to [0, 1] and maps anything else to conf.DEFAULT_CONFIDENCE.
                    "confidence": {"type": ["number", "string", "null"]},
                },
                "required": ["fact_type", "content", "confidence"],
            },
        }
    },
    "required": ["facts"],
}

EXTRACT_SYSTEM = (
    "You extract durable facts about a learner from their latest message to a learning coach. "
    "Fact types: preference (how or when they like to learn), barrier (what gets in the way), "
    "progress (what they did or achieved), insight (their goals and other lasting facts). "
    "Write each fact as one short sentence starting with 'The learner'. Use only the LATEST learner "
    "message; earlier messages are context. Greetings and small talk have no facts. "
    "Confidence is a number from 0 to 1.\n"
    "Example message: I'm preparing for the IELTS exam in May and I focus best early in the morning.\n"
    'Example answer: {"facts": [{"fact_type": "insight", "content": "The learner is preparing for the IELTS '
    'exam in May.", "confidence": 0.9}, {"fact_type": "preference", "content": "The learner focuses best '
    'early in the morning.", "confidence": 0.8}]}\n'
    "Example message: thanks, see you tomorrow!\n"
    'Example answer: {"facts": []}'
)

SUMMARY_SYSTEM = (
    "You write a short narrative summary (2-4 sentences, third person, plain text, no lists) of what "
    "is known about a learner from the facts given. Do not add anything that is not in the facts."
)


def extraction_messages(*, target: str, context: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Chat messages for extraction. Earlier turns are context only; the target is marked."""
    lines = [f"{'Learner' if role == 'learner' else 'Coach'}: {text[:600]}" for role, text in context]
    transcript = "\n".join(lines) if lines else "(no earlier messages)"
    user = (f"Earlier conversation (context only):\n{transcript}\n\n"
            f"LATEST learner message:\n{target[:2000]}\n\nExtract the facts as JSON.")
    return [{"role": "system", "content": EXTRACT_SYSTEM}, {"role": "user", "content": user}]


def summary_messages(*, facts: list[tuple[str, str]], previous: str | None) -> list[dict[str, str]]:
    lines = "\n".join(f"- ({t}) {c}" for t, c in facts)
    prev = f"Previous summary: {previous[:800]}\n\n" if previous else ""
    return [{"role": "system", "content": SUMMARY_SYSTEM},
            {"role": "user", "content": f"{prev}New facts:\n{lines}\n\nWrite the summary."}]
