"""Decode-time constraints that are not JSON schemas (those go through `schema`).

PLAIN_TEXT: a chat reply as one paragraph of plain text — no line break, no markdown emphasis or
heading mark (`*`, `#`, `_` runs are not needed in a chat message), no template tag (`<`). Asked
with the chat option `plain_text`. Why at decode time: the 0.5B default model answers "a complete
guide" or "a big list" with a markdown list whatever the prompt says; the guard then flattened it
(8 of 15 guard actions of a full evaluation run) and the stream gate held the reply back until the
end, because flattening rewrote text already generated. Under the grammar the model writes the same
content as sentences, and the words stream as they pass the guard.

Applied by llama.cpp (in-process, and llama.cpp's OpenAI-compatible servers read `grammar` from the
request body); Ollama has no grammar option: there the guard's flattening still does the job."""

from __future__ import annotations

# GBNF (llama.cpp grammars): characters none of which is a line break, '*', '#', '_' or '<', and
# no list marker in front: the first character is no bullet, and a leading number is not followed by
# "." or ")" ("1. Start with…", measured: bench/bench_plain_grammar.py) unless a digit follows ("2.5 hours").
PLAIN_TEXT_GBNF = r"""root ::= lead [^\n\r*#_<]*
lead ::= [^\n\r*#_<0-9•-] | [0-9]+ ([^.)0-9\n\r*#_<] | "." [0-9])"""
