"""The labelled corpus the entity model is trained and tested on.

Training: `generate_training()` fills learning-coach sentence templates from vocabulary lists
with a seeded RNG, so the labels are exact by construction and the set is reproducible.
Testing: `heldout.jsonl`, hand-written learner messages labelled by hand. It is never used for
training; its F1 is the number worth reporting, because template F1 only measures how well the
model learned the templates.

Annotation rules (shared by both): an entity is the shortest span that names the thing; a
leading "in/on/at/by/for/until/since" is not part of a time, but "every/next/last/this/before/after"
are, since they change its meaning; titles ("Mr.", "Dr.") are not part of a person; spans never
overlap (GLiNER's flat decoding cannot produce nested spans).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from core.llm.assets import ENTITY_LABELS

HELDOUT_PATH = Path(__file__).with_name("heldout.jsonl")
# The same word pattern as gliner's "whitespace" splitter, so word indices in the training data
# line up with how the model splits text at inference time.
WORD_RE = re.compile(r"\w+(?:[-_]\w+)*|\S")
DEFAULT_SEED = 20261130
DEFAULT_TRAIN_SIZE = 600


class CorpusError(ValueError):
    """A corpus line is malformed. `str(err)` names the line and the problem."""


@dataclass(frozen=True)
class Example:
    text: str
    # (start_char, end_char_exclusive, label), sorted by start
    spans: tuple[tuple[int, int, str], ...]


def split_words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in WORD_RE.finditer(text)]


def to_gliner(example: Example) -> dict:
    """`{"tokenized_text": words, "ner": [[start_word, end_word_inclusive, label], ...]}`."""
    words = split_words(example.text)
    starts = {start: i for i, (_, start, _) in enumerate(words)}
    ends = {end: i for i, (_, _, end) in enumerate(words)}
    ner = []
    for start, end, label in example.spans:
        if start not in starts or end not in ends:
            raise CorpusError(f"span {example.text[start:end]!r} in {example.text!r} does not fall on word boundaries")
        ner.append([starts[start], ends[end], label])
    return {"tokenized_text": [w for w, _, _ in words], "ner": ner}


def make_example(text: str, entities: list[tuple[str, str]], *, where: str = "") -> Example:
    """Locate each (surface, label) in `text` (first occurrence after the previous match of the
    same surface) and validate labels, boundaries and overlaps."""
    spans: list[tuple[int, int, str]] = []
    seen_from: dict[str, int] = {}
    for surface, label in entities:
        if label not in ENTITY_LABELS:
            raise CorpusError(f"{where}unknown label {label!r} (expected one of {', '.join(ENTITY_LABELS)})")
        start = text.find(surface, seen_from.get(surface, 0))
        if start < 0 or not surface:
            raise CorpusError(f"{where}entity {surface!r} is not a substring of {text!r}")
        seen_from[surface] = start + len(surface)
        spans.append((start, start + len(surface), label))
    spans.sort()
    for (_s1, e1, _), (s2, _, _) in itertools.pairwise(spans):
        if s2 < e1:
            raise CorpusError(f"{where}overlapping entities in {text!r}")
    example = Example(text=text, spans=tuple(spans))
    try:
        to_gliner(example)
    except CorpusError as exc:
        raise CorpusError(f"{where}{exc}") from None
    return example


def load_heldout(path: Path = HELDOUT_PATH) -> list[Example]:
    examples = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{lineno}: "
        try:
            row = json.loads(line)
            text, entities = row["text"], row["entities"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise CorpusError(f"{where}not a {{'text', 'entities'}} JSON object ({exc})") from None
        examples.append(make_example(text, [(s, lab) for s, lab in entities], where=where))
    return examples


# --- template generator -----------------------------------------------------------------------
# Vocabulary is deliberately broad (languages, programming, school subjects, music, sport,
# professional skills) so the model learns the *roles* in a sentence, not a short name list.
VOCAB: dict[str, list[str]] = {
    "skill": [
        "Spanish", "Japanese", "Python", "calculus", "statistics", "piano", "violin", "SQL", "Swahili",
        "Dutch", "Polish", "Turkish", "C++", "Haskell", "Kotlin", "React", "web design", "photography",
        "algebra", "geometry", "trigonometry", "physics", "accounting", "bookkeeping", "copywriting",
        "Vietnamese", "Thai", "Cantonese", "Norwegian", "speed reading", "mental math", "coding",
        "data analysis", "cooking", "knitting", "swimming", "public speaking", "time management",
        "salsa dancing", "drums", "ukulele", "Latin", "Hebrew", "Finnish", "Scala", "PHP", "Swift",
        "economics", "microeconomics", "anatomy", "biochemistry", "music theory", "sketching",
        "UX research", "project management", "leadership", "debating", "creative writing", "poetry",
    ],
    "tool": [
        "Anki", "Notion", "Todoist", "Memrise", "Babbel", "Evernote", "OneNote", "Jupyter", "PyCharm",
        "Figma", "Slack", "Miro", "RemNote", "Brainscape", "Google Calendar", "Outlook", "Focusmate",
        "Toggl", "RescueTime", "ChatGPT", "Wolfram Alpha", "Desmos", "GeoGebra", "Photoshop",
        "Logic Pro", "GarageBand", "Clozemaster", "LingQ", "Busuu", "Codecademy app", "Replit",
        "Vim", "Emacs", "Sublime Text", "Kindle", "Goodreads", "Strava", "Habitica", "Forest app",
    ],
    "resource": [
        "Deep Work", "Make It Stick", "A Mind for Numbers", "Think Python", "Clean Code",
        "the Feynman Lectures", "Hooked on Phonics", "Assimil French", "Tae Kim's guide",
        "Fluent Forever", "the Pragmatic Programmer", "Structure and Interpretation of Computer Programs",
        "the Art of Problem Solving book", "Khan Academy videos", "the Grokking Algorithms book",
        "Minna no Nihongo", "English Grammar in Use", "the Duolingo podcast", "Lex Fridman podcast",
        "the Huberman Lab podcast", "the official Python tutorial", "the React docs", "Head First Java",
        "Introduction to Algorithms", "Wheelock's Latin", "the Barron's vocabulary list",
        "the Hacking with Swift tutorials", "Mathologer videos", "Ultimate Spanish Review",
    ],
    "course": [
        "Learning How to Learn", "Machine Learning Crash Course", "MIT 6.006", "Spanish 201",
        "Algorithms Part I", "Full Stack Open", "Introduction to Psychology", "Biology 101",
        "the Deep Learning Specialization", "Data Structures and Algorithms", "Calculus II",
        "the Web Development Bootcamp", "Financial Accounting", "Japanese for Beginners",
        "Modern Poetry", "Linear Algebra 18.06", "the Elements of AI course", "Statistics 110",
        "Programming Foundations", "the evening pottery class", "Business English B2",
        "the UX Design Certificate", "Microeconomics 1A", "Harmony and Counterpoint",
    ],
    "exam": [
        "JLPT N3", "JLPT N2", "HSK 4", "HSK 5", "TOEIC", "SAT", "ACT", "GMAT", "LSAT", "MCAT",
        "DELE B2", "TestDaF", "CCNA", "CompTIA A+", "Terraform Associate exam", "Oracle Java certification",
        "A-level maths exam", "GCSE physics exam", "final exam", "midterm", "CPA exam", "ACCA exam",
        "Goethe B1 exam", "TOPIK II", "PTE Academic", "Duolingo English Test", "ABRSM Grade 5",
        "Google Cloud Associate exam", "NCLEX", "bar exam",
    ],
    "person": [
        "Maria", "Kenji", "Aisha", "Lucas", "Chloe", "Raj", "Ingrid", "Mateo", "Yuki", "Sofia",
        "Daniel", "Nadia", "Ahmed", "Elena", "Wei", "Grace", "Pedro", "Hannah", "Oskar", "Zainab",
        "Liam", "Noor", "Carmen", "Felix", "Ivana", "Thabo", "Marco", "Leila", "Sven", "Beatriz",
        "Professor Alvarez", "Ravi", "Emma", "Jakub", "Camila",
    ],
    "organization": [
        "Udacity", "Duke University", "Stanford", "Codecademy", "Pluralsight", "the British Council",
        "Instituto Cervantes", "Alliance Française", "IBM", "Amazon", "Microsoft", "Accenture",
        "the NHS", "Oxford", "ETH Zurich", "LinkedIn Learning", "Khan Academy", "Brilliant",
        "the University of Tokyo", "Berlitz", "DataCamp", "General Assembly", "Meta", "Spotify",
        "Toyota", "Unilever", "Red Cross", "the local library service",
    ],
    "place": [
        "Madrid", "Tokyo", "Toronto", "Sydney", "Cape Town", "Mexico City", "Paris", "Rome",
        "Amsterdam", "Vienna", "Prague", "Bangalore", "Singapore", "Istanbul", "Cairo", "Lagos",
        "Vancouver", "Melbourne", "Edinburgh", "Glasgow", "Boston", "Chicago", "Austin", "Bogota",
        "Lima", "Santiago", "Warsaw", "Helsinki", "Oslo", "Zurich", "the public library",
        "the campus library", "Hyde Park", "the Starbucks on Main Street",
    ],
    "time": [
        "tomorrow", "tonight", "next Monday", "next month", "this evening", "every weekend",
        "every day", "each morning", "before 9am", "after dinner", "every lunchtime", "most evenings",
        "April", "November", "October", "15 May", "the 3rd of June", "the end of the month",
        "two weeks", "three months", "Tuesday", "Friday afternoon", "Sunday night", "mornings",
        "weekends", "7:30", "9pm", "10am", "this Saturday", "last month", "summer", "spring",
        "the holidays", "Easter", "early mornings", "every other day", "twice a week",
    ],
}

# Templates: `{label}` marks a slot (a label may appear once per template). Written to sound like
# learner chat, with lower-case, questions and fragments, not just textbook sentences.
TEMPLATES: list[str] = [
    "I want to pass the {exam} in {time}.",
    "My tutor {person} suggested {tool} for vocabulary.",
    "I study {skill} {time}.",
    "Can we plan three {skill} sessions for {time}?",
    "I signed up for {course} on {organization}.",
    "The {exam} is on {time} and I feel behind.",
    "I keep my notes in {tool} but I never look at them.",
    "I'm reading {resource} and I'm stuck on chapter 3.",
    "My manager {person} wants me to learn {skill} by {time}.",
    "I practise {skill} in {place} on {time}.",
    "Is {resource} enough to prepare for the {exam}?",
    "I only have 20 minutes {time}.",
    "My friend {person} is also doing {course}.",
    "I moved to {place} and want to get better at {skill}.",
    "{time} I skipped my {skill} lesson again.",
    "I use {tool} on the bus but it feels too easy.",
    "The {exam} is booked for {time}.",
    "I finished the first module of {course} from {organization}.",
    "I learn best {time} when it's quiet.",
    "My teacher {person} recommended {resource}.",
    "I want to improve my {skill} before the trip to {place}.",
    "Can you remind me to review {skill} {time}?",
    "I failed the {exam} the first time.",
    "I watch {resource} to understand {skill}.",
    "I'm taking {course} at {organization} {time}.",
    "I work at {organization} and need {skill} for my job.",
    "{person} and I quiz each other {time}.",
    "I write everything in {tool}.",
    "I study at {place} {time}.",
    "Should I read {resource} or take {course}?",
    "I have a {skill} class with {person} on {time}.",
    "My goal is a good score on the {exam} by {time}.",
    "I track my hours in {tool}.",
    "I listen to {resource} on my commute.",
    "{time} I only did two sessions of {skill}.",
    "My mentor at {organization} says I should learn {skill}.",
    "I'd like to get ready for the {exam} in {time}.",
    "{person} taught me some {skill} when I was a kid.",
    "I joined a study group in {place}.",
    "{course} is free so I'm starting it {time}.",
    "Please schedule my {skill} practice for {time}.",
    "I'm working through {resource} slowly.",
    "I want to learn {skill} but I struggle with focus.",
    "Our group meets at {place} {time}.",
    "I use {tool} to stay focused.",
    "The {exam} is in {time} and I'm nervous.",
    "{person} teaches {course} at {organization}.",
    "i practise {skill} with {tool} {time}",
    "{time} I'll finish the {skill} tutorial on {organization}.",
    "My mum wants me to pass the {exam}.",
    "I bookmarked {resource} for later.",
    "I'm in {place} until {time}, so my schedule changes.",
    "{person} from work suggested {tool}.",
    "I enrolled in {course} by {organization}.",
    "I need to brush up on {skill} before {time}.",
    "{person} said I should stop studying after {time}.",
    "I'm preparing for the {exam} with {resource}.",
    "I use {tool} for spaced repetition.",
    "My daughter {person} helps me with {skill}.",
    "Could we move the session to {time}?",
    "I've been using {tool} since {time}, on and off.",
    "I'm attending a {skill} workshop in {place}.",
    "I got a grant from {organization} to study in {place}.",
    "how do I get better at {skill}?",
    "what should I do first for the {exam}?",
    "is {tool} good for learning {skill}?",
    "I have {course} homework due {time}.",
    "{person} lent me {resource}.",
    "I'm visiting {place} over {time}.",
    "my colleague {person} showed me {tool}",
    "I'd like to work on {skill} with {person}.",
    "I dropped {course} because of my job at {organization}.",
    "Thanks! I did {skill} for an hour {time}.",
    "The {exam} results come out in {time}.",
    "I think {resource} is too advanced for me.",
    "We moved our study group from {place} to {organization}'s office.",
]


def fill_template(template: str, rng: random.Random) -> Example:
    parts = re.split(r"(\{[a-z]+\})", template)
    text = ""
    spans: list[tuple[int, int, str]] = []
    for part in parts:
        slot = re.fullmatch(r"\{([a-z]+)\}", part)
        if slot:
            label = slot.group(1)
            value = rng.choice(VOCAB[label])
            if not text:  # sentence-initial slot: capitalise as a person would type it
                value = value[0].upper() + value[1:]
            # Annotation rule: a leading article belongs to a time ("the end of the month") but
            # not to a name ("the British Council" -> "British Council"), as in heldout.jsonl.
            skip = 4 if label != "time" and value[:4].lower() == "the " else 0
            spans.append((len(text) + skip, len(text) + len(value), label))
            text += value
        else:
            text += part
    return Example(text=text, spans=tuple(spans))


def generate_training(n: int = DEFAULT_TRAIN_SIZE, seed: int = DEFAULT_SEED) -> list[Example]:
    """`n` distinct template sentences, reproducible from `seed`; never a held-out sentence."""
    rng = random.Random(seed)
    heldout_texts = {ex.text for ex in load_heldout()}
    seen: set[str] = set()
    examples: list[Example] = []
    attempts = 0
    while len(examples) < n:
        attempts += 1
        if attempts > n * 50:
            raise CorpusError(f"cannot generate {n} distinct sentences from the templates")
        template = TEMPLATES[len(examples) % len(TEMPLATES)] if attempts <= n else rng.choice(TEMPLATES)
        example = fill_template(template, rng)
        if example.text in seen or example.text in heldout_texts:
            continue
        seen.add(example.text)
        examples.append(example)
    rng.shuffle(examples)
    return examples


def fingerprint(*, n: int = DEFAULT_TRAIN_SIZE, seed: int = DEFAULT_SEED, extra: dict | None = None) -> str:
    """Hash of everything that determines the trained model: corpus, labels, training settings.
    A model dir whose stamp carries another fingerprint is stale and gets retrained."""
    digest = hashlib.sha256()
    payload = {
        "train": [[ex.text, ex.spans] for ex in generate_training(n, seed)],
        "heldout": HELDOUT_PATH.read_text(encoding="utf-8"),
        "labels": list(ENTITY_LABELS),
        "extra": extra or {},
    }
    digest.update(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()
