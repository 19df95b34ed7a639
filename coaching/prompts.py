"""Versioned system prompts (short: the default model is 0.5B) and the templated fallbacks.
Bump PROMPT_VERSION whenever any text here changes: it is stored on every Turn, so evaluation
runs can tell prompt versions apart."""

from __future__ import annotations

PROMPT_VERSION = "2026-12-01.3"

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

# One exemplar exchange per kind of call (few-shot). Short on purpose: every token of prompt costs
# time on two CPU cores. The onboarding exemplar carries no facts: its former one ("about 3 hours,
# my evenings are busy with the kids") came back as "Six hours a week around the kids…" to a
# learner who had answered "6" to the confidence question and never mentioned children. The
# guard's example_copy check (reply_checks) rejects any such copy that still gets through.
EXEMPLARS = {
    "onboarding": ("that's my answer", "Thanks, that helps me fit the plan to you."),
    "default": ("I skipped my practice yesterday, I was too tired",
                "That happens, and rest counts too. What would make your next practice feel easier?"),
}
# Exemplars no longer shipped, kept so evaluation still recognises their copies in older runs.
RETIRED_EXEMPLARS = [("about 3 hours, my evenings are busy with the kids",
                      "Three hours a week around the kids is a real commitment.")]
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


def system_prompt(specialist: str, *, base: str | None = None) -> str:
    """`base` replaces the shared opening (evaluation replays a prompt variant through it)."""
    return f"{base or BASE}\n{SPECIALIST_PROMPTS[specialist]}"


def exemplar(specialist: str) -> list[dict]:
    user, assistant = EXEMPLARS.get(specialist, EXEMPLARS["default"])
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


_REGENERATE_HINTS = {
    "third_person": "Speak to me directly as “you”, never about me.",
    "parrot": "Do not repeat my message back; answer it in your own words.",
    "refusal": "This is an ordinary coaching message: answer it helpfully, do not refuse.",
    "loop": "Say something new; do not repeat an earlier reply.",
    "leak": "Write only the chat message itself, no labels, headings or notes.",
    "honesty": "Do not claim any action that was not done.",
    "drift": "Stay on my own goal.",
    "example_copy": "Mention only what I told you; nothing from any example.",
    "coach_as_learner": "You are my coach: do not speak as if you were me.",
    "repeat": "Do not ask or say again what you said in your last replies.",
    "unprompted_greeting": "Do not greet me; react to what I just said.",
}


def regenerate_note(kinds: list[str]) -> str:
    """The corrective note for the one regeneration the guard allows, naming what was wrong."""
    hints = [_REGENERATE_HINTS[k] for k in kinds if k in _REGENERATE_HINTS]
    return ("Your previous reply was rejected. Reply again in plain text, at most 3 short sentences, only about "
            "my goal. " + " ".join(hints)).strip()


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
