"""The word index answers "which files mention this word" exactly as a byte search of every
file does, for any word, and a tree's facts make it once the searches would have paid for it."""

from __future__ import annotations

from tracer.sources.snapshot import local_snapshot
from tracer.store import facts as facts_module
from tracer.store.cache import FactCache
from tracer.store.facts import Facts
from tracer.store.words import make_index

FILES = {
    "pkg/__init__.py": "",
    "pkg/args.py": """
        parser.add_argument("--dp-size", type=int, default=1)
        dp_size = args.dp_size
        """,
    "pkg/rpc.py": """
        def run_method(obj, method):
            return getattr(obj, method)()

        run_method(worker, "determine_available_memory")
        """,
    "pkg/pool.py": """
        class Pool:
            def __init__(self, size):
                self.page_size = size  # the size of a page, in tokens
                self.naïve = "é"
        """,
    "pkg/other.py": """
        x = 0.5
        s = "a b"
        """,
}

WORDS = [
    "dp_size",  # one run, inside longer ones too (`args.dp_size`)
    "size",  # a part of several runs
    "dp-size",  # runs with a character between
    "--dp-size",
    '"determine_available_memory"',  # quoted: the runs inside, then the bytes
    "determine_available",
    "getattr(obj",
    "page_size =",
    "naïve",  # not ASCII
    "é",
    "s",  # shorter than a run the index looks up
    "0.5",
    "a b",
    "absent_word",
    "tokens",  # in a comment
    "self.page_size",
]


def test_the_index_finds_the_files_a_byte_search_finds(write_tree):
    snapshot = local_snapshot(write_tree(FILES))
    facts = Facts(snapshot, FactCache(enabled=False))
    facts.words = make_index(snapshot.read(path) for path in snapshot.files)
    facts.words_looked_for = True
    for word in WORDS:
        assert facts.search(word) == snapshot.grep(word), word
    assert facts.search("dp_size") == ["pkg/args.py"]
    assert facts.search("size") == ["pkg/args.py", "pkg/pool.py"]
    assert facts.search('"determine_available_memory"') == ["pkg/rpc.py"]
    assert facts.scans == 5  # naïve, é, s, 0.5, a b: the index says nothing of them


def test_the_index_is_made_once_the_searches_would_pay_for_it_then_kept(
    write_tree, tmp_path, monkeypatch
):
    monkeypatch.setattr(facts_module, "SCANS_PER_INDEX", 3)
    snapshot = local_snapshot(write_tree(FILES))
    cache = FactCache(tmp_path / "cache")
    facts = Facts(snapshot, cache)
    found = [facts.mentioning(word) for word in ("dp_size", "size", "page_size")]
    assert facts.words is None and facts.scans == 3
    assert facts.mentioning("run_method") == ["pkg/rpc.py"]  # the index made, and kept
    assert facts.words is not None and facts.scans == 3
    again = Facts(snapshot, cache)
    assert again.search("page_size") == found[2] == ["pkg/pool.py"]
    assert again.scans == 0 and again.words == facts.words
    assert [again.search(word) for word in ("dp_size", "size")] == found[:2]
