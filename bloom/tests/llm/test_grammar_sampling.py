"""Grammar-last sampling (core.llm.grammar_sampling) on the real 0.5B model in process: the same
tokens as llama-cpp-python's grammar-first chain, and never a token the grammar refuses."""

from __future__ import annotations

import json

import pytest

from core.llm import grammar_sampling
from core.llm.grammars import PLAIN_TEXT_GBNF

PROMPTS = (
    "Name one fruit and its colour.",
    "What should I study tonight? Answer with an act and a reason.",
    "Count from one to five in French.",
)
ACTS = {"type": "object", "properties": {"act": {"type": "string", "enum": ["answer", "question", "report"]},
                                         "reason": {"type": "string", "maxLength": 60}},
        "required": ["act"], "additionalProperties": False}


@pytest.fixture(scope="module")
def llama(chat_model_file):
    import llama_cpp

    grammar_sampling.install()
    model = llama_cpp.Llama(model_path=str(chat_model_file), n_ctx=512, n_threads=2, verbose=False, seed=7)
    yield model
    model.close()


def _complete(llama, prompt: str, grammar, **options) -> tuple[str, object]:
    out = llama.create_chat_completion([{"role": "user", "content": prompt}], grammar=grammar, max_tokens=48,
                                       **options)
    return out["choices"][0]["message"]["content"], llama._sampler


def _grammars():
    from llama_cpp import LlamaGrammar

    return {"schema": LlamaGrammar.from_json_schema(json.dumps(ACTS), verbose=False),
            "plain text": LlamaGrammar.from_string(PLAIN_TEXT_GBNF, verbose=False)}


def test_greedy_output_is_the_grammar_first_chains(llama, monkeypatch):
    import llama_cpp

    grammar_last = llama_cpp.Llama._init_sampler
    assert getattr(grammar_last, "bloom_grammar_last", False)
    outputs = {}
    for name, init in (("grammar first", grammar_last.__wrapped__), ("grammar last", grammar_last)):
        monkeypatch.setattr(llama_cpp.Llama, "_init_sampler", init)
        outputs[name] = [_complete(llama, prompt, grammar, temperature=0.0)[0]
                         for prompt in PROMPTS for grammar in _grammars().values()]
    assert outputs["grammar last"] == outputs["grammar first"]
    assert all(text.strip() for text in outputs["grammar last"])


def test_a_refused_first_draw_is_drawn_again_under_the_grammar(llama):
    """Sampled hot, the free draw often leaves the schema; every output still parses and keeps the enum."""
    redrawn = 0
    for seed in range(4):
        llama.set_seed(seed)
        text, sampler = _complete(llama, PROMPTS[1], _grammars()["schema"], temperature=1.5, top_k=200, top_p=1.0)
        assert isinstance(sampler, grammar_sampling.GrammarLastSampler)
        assert json.loads(text)["act"] in ACTS["properties"]["act"]["enum"], text
        redrawn += sampler.redrawn
    assert redrawn > 0


def test_allows_reads_the_grammar_state(llama):
    from llama_cpp import LlamaGrammar

    chain = llama_cpp_chain(llama, LlamaGrammar.from_json_schema(json.dumps(ACTS), verbose=False))
    brace, = llama.tokenize(b"{", add_bos=False, special=False)
    word = llama.tokenize(b"Hello", add_bos=False, special=False)[0]
    assert chain.allows(brace) and not chain.allows(word)


def llama_cpp_chain(llama, grammar) -> grammar_sampling.GrammarLastSampler:
    sampler = llama._init_sampler(temp=0.0, grammar=grammar)
    assert isinstance(sampler, grammar_sampling.GrammarLastSampler)
    return sampler
