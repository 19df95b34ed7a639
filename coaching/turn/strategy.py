"""How the reply meets the message: code chooses a strategy for the reading's act, the model
phrases it, and when the guard rejects the model's words twice the fallback does what the
strategy says with what code knows, instead of a generic line on the goal.

- a report: acknowledge what they did (code has logged it), then one question about it;
- a barrier or doubt: reflect it in your own words, say it is common, ask what got in the way,
  offer a smaller plan;
- a question: answer it from what you know, then one small next step;
- "undo" when nothing can be undone: code says so plainly and asks what they want changed (no model:
  it is a fact code knows);
- news or anything else: respond to what they said, then at most one question.
Pure: no database, no model."""

from __future__ import annotations

from dataclasses import dataclass

from coaching.turn.reading.types import QUESTION, REPORT, SMALL_TALK, UNDO, Reading

# One line each, in the prompt's own voice: the 0.5B model copies long instructions back.
_INSTRUCTIONS = {
    "report": "They told you how a session went: acknowledge exactly what they did, then ask one question about it.",
    "barrier": ("They are struggling or doubting: say back what you hear, say it happens to many people, ask what "
                "got in the way, and offer to make the plan smaller."),
    "question": "They asked you something: answer it directly first, then suggest one small next step.",
    "small_talk": "Reply briefly and warmly, then ask what they would like to work on.",
    "other": "Respond to what they actually said, then ask at most one question.",
}


@dataclass(frozen=True)
class Strategy:
    name: str
    instruction: str


def strategy_for(reading: Reading | None) -> Strategy:
    if reading is None:
        return Strategy("other", _INSTRUCTIONS["other"])
    if reading.get("concern"):
        name = "barrier"
    elif reading.act == REPORT:
        name = "report"
    elif reading.act == QUESTION:
        name = "question"
    elif reading.act == SMALL_TALK:
        name = "small_talk"
    elif reading.act == UNDO:
        name = "undo"  # routed here only when the previous turn wrote nothing undo can take back
    else:
        name = "other"
    return Strategy(name, _INSTRUCTIONS.get(name, ""))


_FUNCTION_WORDS = frozenset({"i", "you", "the", "a", "an", "to", "my", "me", "is", "it", "of", "in", "for", "on", "do",
                             "does", "did", "can", "could", "should", "would", "will", "what", "how", "why", "when",
                             "where", "which", "who", "any", "idea", "think", "and", "or", "so", "be", "are", "am",
                             "that", "this", "there", "just", "really", "your", "we", "us", "have", "has"})


_LOOSE_ENDS = _FUNCTION_WORDS | {"before", "after", "with", "without", "than", "then", "but", "if", "because"}


def gist(question: str, limit: int = 7) -> str:
    """A few of the learner's words naming what they asked about (not the whole question: said back
    whole, it is parroting): from the first word that carries meaning, at most `limit` words, not
    ending on a word that leads somewhere else ("before or")."""
    words = [w.strip(",.;!?\"'“”") for w in question.split()]
    start = next((i for i, w in enumerate(words) if w.lower() not in _FUNCTION_WORDS and len(w) > 2), 0)
    picked = [w for w in words[start:start + limit] if w]
    while len(picked) > 1 and picked[-1].lower() in _LOOSE_ENDS:
        picked.pop()
    return " ".join(picked)


def fallback_reply(strategy: Strategy, *, learner_text: str, goal: str) -> str:
    """What the coach says when the model's words did not pass the guard twice: the strategy's
    move, in code's words, about this message — never a line that could answer any message."""
    on_goal = f" with “{goal}”" if goal else ""
    if strategy.name == "barrier":
        return ("That sounds hard, and it happens to a lot of people — it doesn't mean you can't do this. "
                f"What got in the way most{on_goal}? If it helps, say “plan a lighter week” and I'll make the "
                "plan smaller.")
    if strategy.name == "question":
        return (f"I couldn't put together a good answer about “{gist(learner_text)}” just now. Tell me a bit more "
                f"about what you need{on_goal}, or ask it another way, and I'll try again.")
    if strategy.name == "report":
        return "Thanks for telling me how it went. What was the hardest part of it?"
    if strategy.name == "undo":
        return ("There's nothing for me to undo — my last reply didn't change your plan, check-ins or profile. "
                "What would you like to change?")
    if strategy.name == "small_talk":
        return f"Hi! What would you like to work on{on_goal} today?"
    return (f"Thanks for telling me. How does that fit with your practice{on_goal} this week?" if goal
            else "Thanks for telling me. What would you like to do next?")
