"""Reference figures for tests/tokenizer.rs from Hugging Face's own Python stack.

Run with a Python that has `transformers` (e.g. the aiperf venv):
    python scripts/make_tokenizer_fixture.py tests/fixtures/tokenizer/minilm \
        > tests/fixtures/tokenizer/minilm-reference.json

For the tokenizer it prints what vLLM's random dataset reads from it (`vocab_size`,
`num_special_tokens_to_add()`, the non-special ids below the vocabulary size) and, for a few
starting offsets and lengths, the first round of vLLM's `generate_token_sequence`: the text
that `allowed[(start + k) % len(allowed)]` decodes to and the length it re-encodes to
(`add_special_tokens=False`).
"""
import json
import sys

from transformers import AutoTokenizer

# As vLLM loads it: the folder, with tokenizer_config.json and special_tokens_map.json.
tok = AutoTokenizer.from_pretrained(sys.argv[1])
special = set(tok.all_special_ids)
allowed = [t for t in range(tok.vocab_size) if t not in special]
cases = []
for start in [0, 1000, 2023, 17000, 29000]:
    for target in [8, 100, 1022]:
        ids = [allowed[(start + k) % len(allowed)] for k in range(target)]
        text = tok.decode(ids)
        again = tok.encode(text, add_special_tokens=False)
        cases.append({"start": start, "target": target, "text": text,
                      "reencoded_tokens": len(again)})
texts = ["Hello, world!", "The quick brown fox jumps over the lazy dog.",
         "naïve café — 東京 🚀", "   spaces   and\ttabs\n"]
print(json.dumps({
    "vocab_size": tok.vocab_size,
    "num_special_tokens_to_add": tok.num_special_tokens_to_add(),
    "special_ids": sorted(special),
    "allowed": len(allowed),
    "cases": cases,
    "counts": [{"text": t, "tokens": len(tok.encode(t, add_special_tokens=False))}
               for t in texts],
}, ensure_ascii=False, indent=1))
