"""The rules that compare two statements (memory.comparison): conflicts and restatements."""

from __future__ import annotations

import pytest

from memory import comparison


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("The learner prefers studying in the morning.", "The learner does not prefer studying in the morning.",
     "negation_mismatch"),
    ("The learner prefers studying in the morning.", "The learner prefers studying in the evening.",
     "opposite:morning/evening"),
    ("The learner likes flashcards.", "The learner dislikes flashcards.", "opposite:likes/dislikes"),
    ("The learner studies 5 hours a week.", "The learner studies 10 hours a week.", "changed_value"),
    ("The learner studies five hours a week.", "The learner studies 8 hours a week.", "changed_value"),
    ("The learner prefers studying in the morning.", "The learner prefers to study in the morning.", None),
    ("The learner can't focus after work.", "The learner cannot focus after work.", None),
    # A habit that ended contradicts the habit (missed in a client trial before the cessation words).
    ("I practise in the mornings.", "I've stopped practising in the mornings, evenings work better now.",
     "negation_mismatch"),
    ("I go running on Sundays.", "I quit running on Sundays.", "negation_mismatch"),
    ("I study Spanish with flashcards.", "I gave up on flashcards for Spanish.", "negation_mismatch"),
    ("I went to the bakery this morning.", "I stopped by the bakery this morning.", None),  # a visit
    ("I stopped practising scales.", "I quit practising scales.", None),  # both say it ended
])
def test_surprise_rule(old, new, reason):
    assert comparison.conflict_reason(old, new) == reason


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("The learner is nervous when I have to speak, I freeze and forget every word.",
     "The learner freezes and forget every word.", True),  # seen on a replay: cosine 0.81
    ("Studies Spanish in the evening after work.", "Studies Spanish in the morning.", False),  # new word
    ("Wants to pass the B1 exam.", "Wants to pass the B1 exam in 2027.", False),  # a new number
    ("Practises scales every day.", "Practises.", False),  # too little to judge
])
def test_restatement_rule(old, new, expected):
    assert comparison.restates(old, new) is expected
