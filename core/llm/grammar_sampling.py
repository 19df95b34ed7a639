"""Grammar-constrained sampling that checks the grammar last, as llama.cpp's own server does.

llama-cpp-python puts the grammar in the sampler chain before the choice of token, so at every
token the grammar is matched against the whole vocabulary (151,936 tokens for Qwen2.5): on two
cores that doubled the time per token of a schema-constrained call (measured in
docs/model-runtime.md, "Grammar checked last"). Here the chain first chooses a token as if there
were no grammar; if the grammar allows it, it is kept, else the chain runs again with the grammar
applied to every candidate. The result is the same token in either case: greedy takes the best
allowed token, and for sampling, drawing from the full distribution and keeping an allowed token
or else drawing from the allowed ones is the same as drawing from the allowed ones.

Installed on `llama_cpp.Llama` by `install()` (the model server and the in-process provider call it)."""

from __future__ import annotations

import ctypes
from typing import Any

_INSTALLED = "bloom_grammar_last"


class GrammarLastSampler:
    """Stands in for llama-cpp-python's LlamaSampler (its `sample(ctx, idx)`) when the chain holds a grammar."""

    def __init__(self, chain: Any, n_vocab: int):
        import llama_cpp
        import numpy as np

        self._llama_cpp = llama_cpp
        self.chain = chain  # kept: the chain owns the samplers below
        steps = [llama_cpp.llama_sampler_chain_get(chain.sampler, i)
                 for i in range(llama_cpp.llama_sampler_chain_n(chain.sampler))]
        self.grammar = next(s for s in steps if llama_cpp.llama_sampler_name(s) == b"grammar")
        self.without_grammar = [s for s in steps if llama_cpp.llama_sampler_name(s) != b"grammar"]
        self.n_vocab = n_vocab
        dtype = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
        self._candidates = np.zeros(n_vocab, dtype=dtype)
        self._ids = np.arange(n_vocab, dtype=np.intc)
        self._one = llama_cpp.llama_token_data()
        self._np = np
        self.redrawn = 0  # tokens the grammar refused on the first draw (read by the tests)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        lib = self._llama_cpp
        candidates = self._fill(ctx, idx)
        for step in self.without_grammar:
            lib.llama_sampler_apply(step, ctypes.byref(candidates))
        token = int(candidates.data[candidates.selected].id)
        if not self.allows(token):
            self.redrawn += 1
            candidates = self._fill(ctx, idx)
            lib.llama_sampler_apply(self.chain.sampler, ctypes.byref(candidates))
            token = int(candidates.data[candidates.selected].id)
        lib.llama_sampler_accept(self.chain.sampler, token)
        return token

    def allows(self, token: int) -> bool:
        """Whether the grammar, in its current state, lets `token` come next."""
        lib = self._llama_cpp
        self._one.id, self._one.logit, self._one.p = token, 0.0, 0.0
        single = lib.llama_token_data_array(data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False)
        lib.llama_sampler_apply(self.grammar, ctypes.byref(single))
        return single.data[0].logit != float("-inf")

    def _fill(self, ctx: Any, idx: int) -> Any:
        lib, np = self._llama_cpp, self._np
        logits = np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        self._candidates["id"] = self._ids
        self._candidates["logit"] = logits
        self._candidates["p"] = 0.0
        data = self._candidates.ctypes.data_as(ctypes.POINTER(lib.llama_token_data))
        return lib.llama_token_data_array(data=data, size=self.n_vocab, selected=-1, sorted=False)

    # LlamaSampler's other methods, for whatever llama-cpp-python calls on its sampler.
    def __getattr__(self, name: str) -> Any:
        return getattr(self.chain, name)


def install() -> None:
    """Make every `llama_cpp.Llama` sample grammar-last (idempotent)."""
    import llama_cpp

    init_sampler = llama_cpp.Llama._init_sampler
    if getattr(init_sampler, _INSTALLED, False):
        return

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        chain = init_sampler(self, *args, **kwargs)
        if kwargs.get("grammar") is None:
            return chain
        return GrammarLastSampler(chain, self._n_vocab)

    setattr(wrapper, _INSTALLED, True)
    wrapper.__wrapped__ = init_sampler  # type: ignore[attr-defined]
    llama_cpp.Llama._init_sampler = wrapper
