"""A line from another build of the same logging call (fields added, removed or moved around
the same literal text) is read by its words and labels, as a person reads it."""

from __future__ import annotations

from tracer.analyses.explain.loose import label_of, loose_match
from tracer.analyses.explain.match import hole_values
from tracer.analyses.explain.templates import Template, file_templates

SOURCE = b"""
import logging
logger = logging.getLogger(__name__)

def load(self):
    logger.info(
        f"Load weight end. "
        f"type={type(self.model).__name__}, "
        f"dtype={self.dtype}, "
        f"avail mem={after:.2f} GB, "
        f"mem usage={self.usage:.2f} GB."
    )
    logger.info(f"KV Cache is allocated. #tokens: {size}, K size: {k:.2f} GB, V size: {v:.2f} GB")
    logger.info(f"max_total_num_tokens={self.n}, context_len={self.c}, ")
    logger.info(f"Load weight begin. avail mem={before:.2f} GB")
"""


def templates() -> list[Template]:
    return file_templates("runner.py", SOURCE)


def shown(template: Template, message: str) -> dict[str, str] | None:
    """The values MESSAGE shows, by the expression of the hole they fill."""
    found = hole_values(template, message)
    if found is None:
        return None
    return {template.parts[i].expr: raw for i, raw in found.values.items()}  # type: ignore[union-attr]


def test_labels_are_the_words_before_a_hole() -> None:
    assert label_of(" GB, mem usage=") == "mem usage="
    assert label_of("KV Cache is allocated. #tokens: ") == "#tokens:"
    assert label_of("] Load weight begin. avail mem=") == "avail mem="
    assert label_of(" GB") == ""


def test_a_field_added_before_the_others() -> None:
    end = templates()[0]
    line = (
        "Load weight end. elapsed=778.18 s, type=GlmMoeDsaForCausalLM, dtype=torch.bfloat16, "
        "avail mem=193.92 GB, mem usage=89.58 GB."
    )
    assert end.pattern.fullmatch(line) is None
    assert shown(end, line) == {
        "type(self.model).__name__": "GlmMoeDsaForCausalLM",
        "self.dtype": "torch.bfloat16",
        "after": "193.92",
        "self.usage": "89.58",
    }
    found = loose_match(end, line)
    assert found is not None
    assert (found.extra, found.missing, found.reordered) == (("elapsed=",), (), False)


def test_fields_removed_and_moved() -> None:
    end, kv = templates()[:2]
    line = "Load weight end. avail mem=21.50 GB, type=Llama, mem usage=3.00 GB"
    found = loose_match(end, line)
    assert found is not None and (found.missing, found.reordered) == (("dtype=",), True)
    assert shown(end, line) == {
        "type(self.model).__name__": "Llama",
        "after": "21.50",
        "self.usage": "3.00",
    }
    assert shown(kv, "KV Cache is allocated. #tokens: 3262823, KV size: 186.77 GB") == {
        "size": "3262823"
    }
    assert shown(kv, "KV Cache is allocated. K size: 2.82 GB, V size: 2.82 GB.") == {
        "k": "2.82",
        "v": "2.82",
    }


def test_a_line_of_another_message_is_not_matched() -> None:
    end, kv, _, begin = templates()
    assert shown(begin, "Load weight end. type=Llama, avail mem=21.50 GB") is None
    assert shown(end, "Loading weights end. type=Llama, avail mem=21.50 GB") is None
    # The words found, but no number after a label of the call: nothing to read.
    assert shown(kv, "KV Cache is allocated. Sizes: 2.82 GB") is None
    # A label inside another word is not that label: `dtype=` is not `type=`.
    assert shown(end, "Load weight end. dtype=x, avail=1 GB") is None


def test_a_line_is_matched_without_the_space_its_call_ends_with() -> None:
    tokens = templates()[2]
    assert shown(tokens, "max_total_num_tokens=405784, context_len=8192,") == {
        "self.n": "405784",
        "self.c": "8192",
    }
