"""Versioned system prompts (short: the default model is 0.5B) and the templated fallbacks.
Bump PROMPT_VERSION whenever any text here changes: it is stored on every Turn, so evaluation
runs can tell prompt versions apart."""

from __future__ import annotations

PROMPT_VERSION = "2026-12-04.1"

# The 0.5B model copies the prompt's own wording. A prompt that says "the learner" gets
# replies about "the learner"; a prompt with an "ACTIONS line" gets "ACTIONS done this turn" back.
# So every instruction here speaks of the person as "them"/"you", names no prompt section, and
# one short exemplar shows the shape of a good reply (second person, own words, no heading).
BASE = (
    "You are Bloom, a warm learning coach texting with one person about their own goal. "
    "Talk to them directly as “you”. Use your own words: do not repeat their message back. "
    "Write plain chat text: one to three short sentences, no headings, no lists, no markdown. "
    "Never say you scheduled, logged or saved anything unless the notes say it was done."
)

SPECIALIST_PROMPTS = {
    "onboarding": ("In one short sentence, warmly acknowledge what they just told you. "
                   "Mention nothing they did not say, do not repeat their words, do not ask a question, "
                   "and speak as their coach, never as them."),
    "planner": "Encourage them in one or two sentences about planning this week; the app lists the times.",
    "checkin": "They told you how a study session went. Respond to it kindly and encourage the next one.",
    "reflection": ("Help them reflect: say back the feeling you hear in your own words, then ask one open question. "
                   "Do not give advice unasked."),
    "coach": "Answer helpfully and briefly, then ask at most one question.",
}

# Few-shot exemplars, by kind of call. Only the (optional) onboarding acknowledgement has one.
# The 0.5B model copies exemplars: the onboarding one's former facts ("about 3 hours, my evenings
# are busy with the kids") came back as "Six hours a week around the kids…" to a learner who never
# mentioned children, and the general one's closing question ("What would make your next practice
# feel easier?") came back in 13 of 79 replies of a full evaluation run, the learner's half of it
# ("I skipped my practice yesterday") in the coach's voice in 3. Without it (same set, next run)
# the replies were measured again; see docs/coach-quality.md. The guard's and evaluation's
# example_copy check still rejects copies of any exemplar, shipped or retired.
EXEMPLARS = {
    "onboarding": ("that's my answer", "Thanks, that helps me fit the plan to you."),
}
# Exemplars no longer shipped, kept so evaluation still recognises their copies in older runs.
RETIRED_EXEMPLARS = [("about 3 hours, my evenings are busy with the kids",
                      "Three hours a week around the kids is a real commitment."),
                     ("I skipped my practice yesterday, I was too tired",
                      "That happens, and rest counts too. What would make your next practice feel easier?")]
# Stop sequences: the model starting a new turn or a label is the end of its reply.
STOP = ["\nUser:", "\nuser:", "\nLearner:", "\nAssistant:", "\nCoach:", "\n#", "<|im_end|>", "<|endoftext|>"]

FALLBACKS = {
    "onboarding": "Got it.",
    "planner": "Let's keep your plan simple and doable this week.",
    "checkin": "Thanks for letting me know — every check-in helps.",
    "reflection": "Thanks for sharing that. What feels most important to you about it right now?",
    "coach": "Thanks for your message. What would help you most with your goal right now?",
}

# Tracker arm (the study control condition): templated confirmations only, never coaching.
TRACKER_ACK = ("Noted. This tracker records your plan and check-ins; say “let's plan” to plan sessions "
               "or tell me when you did or skipped one.")


def system_prompt(specialist: str, *, base: str | None = None, strategy: str = "") -> str:
    """`base` replaces the shared opening (evaluation replays a prompt variant through it);
    `strategy` is the line code chose for this message's act (coaching.turn.strategy)."""
    return f"{base or BASE}\n{SPECIALIST_PROMPTS[specialist]}" + (f"\n{strategy}" if strategy else "")


def exemplar(specialist: str) -> list[dict]:
    if specialist not in EXEMPLARS:
        return []
    user, assistant = EXEMPLARS[specialist]
    return [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]


def exemplar_pairs(messages: list[dict]) -> list[tuple[str, str]]:
    """The exemplar exchanges present in a message list (what the model could copy from)."""
    contents = {m.get("content") for m in messages}
    return [pair for pair in EXEMPLARS.values() if pair[0] in contents and pair[1] in contents]


def notes_message(context: str, actions: str) -> str:
    """The code-built context as a private note: the profile line without its "About the learner"
    label (the model narrates labels back), then what the app did this turn."""
    profile = context.replace("About the learner: ", "What you know about them: ", 1)
    return f"Notes for you only, never quote them:\n{profile}\n{actions}"


def ack_messages(system: str, learner_text: str) -> list[dict]:
    """The onboarding acknowledgement call: the gate's prompt, one exemplar and the answer."""
    return [{"role": "system", "content": system}, *exemplar("onboarding"), {"role": "user", "content": learner_text}]


# The one regeneration's guidance, in the system prompt's own voice. It used to follow the learner's
# message as "Your previous reply was rejected. …" in the first person: the 0.5B model, shown no
# previous reply, answered that note with "I'm sorry, but I can't assist with that." (8 of 79
# replies of a full evaluation run) or "I'm not sure what you mean by …".
_REGENERATE_HINTS = {
    "third_person": "Speak to them directly as “you”, never about them.",
    "parrot": "Answer in your own words; do not repeat their message.",
    "refusal": "Their message is an ordinary coaching message: answer it helpfully.",
    "loop": "Say something new, not an earlier reply.",
    "leak": "Write only the chat message itself, no labels, headings or notes.",
    "honesty": "Do not claim or promise anything the app did not do: no scheduling, moving, logging or reminders.",
    "drift": "Stay on their own goal.",
    "example_copy": "Mention only what they told you.",
    "coach_as_learner": "You are their coach: never speak as if you were them.",
    "asks_for_advice": "You are the coach: give them one concrete tip yourself, do not ask them for tips.",
    "announces": "Give your two or three most useful points directly; do not announce a guide or a list.",
    "repeat": "Do not ask or say again what you said in your last replies.",
    "unprompted_greeting": "Do not greet them; react to what they just said.",
    "asks_known": "You know their goal from the notes: build on it, do not ask for it.",
    "language": "Answer in English only, even when they write in another language.",
}


def regenerate_note(kinds: list[str]) -> str:
    """The corrective guidance for the one regeneration the guard allows, naming what to avoid."""
    hints = [_REGENERATE_HINTS[k] for k in kinds if k in _REGENERATE_HINTS]
    return " ".join(["Keep it to at most 3 short sentences about their goal.", *hints])


def with_guidance(messages: list[dict], note: str) -> list[dict]:
    """The same call with the guidance added to its first system message (not as a message of its
    own after the learner's, which the small model reads as the conversation's last word)."""
    if messages and messages[0].get("role") == "system":
        return [{**messages[0], "content": f"{messages[0]['content']}\n{note}"}, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


# Second-person fallbacks on the learner's goal, two per specialist so that a fallback never
# becomes the same reply three times in one conversation.
GOAL_FALLBACKS = {
    "planner": ("Let's keep your plan for “{goal}” simple and doable this week.",
                "A small, steady plan for “{goal}” beats a perfect one — let's keep it doable."),
    "checkin": ("Thanks for telling me how it went. What would make your next session for “{goal}” easier?",
                "Thanks for checking in — every report helps you keep “{goal}” going."),
    "reflection": ("Thanks for sharing that. What feels most important to you about “{goal}” right now?",
                   "That sounds worth thinking about. What has helped you most with “{goal}” so far?"),
    "coach": ("Let's keep your focus on “{goal}”. What would help you most with it this week?",
              "You're working on “{goal}” — what's one small step you could take next?"),
    "onboarding": ("", ""),
}


def fallback_for(specialist: str, goal: str, previous_replies: list[str] = ()) -> str:
    """The templated fallback after the guard rejected a reply twice: second person, on the goal,
    and not a text already used in this conversation's recent replies."""
    options = GOAL_FALLBACKS.get(specialist, GOAL_FALLBACKS["coach"])
    texts = [o.format(goal=goal) if goal else FALLBACKS.get(specialist, "") for o in options]
    recent = set(previous_replies[:6])
    for text in texts:
        if not any(text and text in r for r in recent):
            return text
    return texts[-1]
