"""The recall methods bench/recall_eval.py compares: ranked sources and ways to fuse them.

A source turns (query, company key, depth) into ledger ids with scores, best first; a fusion
turns two or more such lists into one. Everything here reads the ledger and the index the
bench loaded, through the same modules recall uses.
"""

import math
from collections import defaultdict
from collections.abc import Sequence

Ranked = list[tuple[int, float]]  # (ledger id, score), best first


def ordered(scores: dict[int, float]) -> Ranked:
    # Higher score first, then the newer (higher) id: the same order every run.
    return sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))


class PythonBM25:
    """BM25 over every live fact's distinct content words (memory.text.tokens), in memory.

    The bench's reference for the lexical half: term frequency is 1 (the ledger keeps
    distinct words), so a fact scores idf(t) * (k1 + 1) / (1 + k1 * (1 - b + b * len / avg))
    per query word it holds. ``scope_stats`` computes N, df and the average length within
    the query's scope (company + global) instead of the whole ledger.
    """

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        scope_stats: bool = False,
        stems: dict[str, str] | None = None,
    ) -> None:
        from memory import text as textmod
        from memory.models import Memory

        self.k1, self.b, self.scope_stats = k1, b, scope_stats
        if stems is None:
            self.tokens = textmod.tokens
        else:
            # Stemmed words (PostgreSQL's English Snowball stemmer), distinct again.
            self.tokens = lambda text: list(
                dict.fromkeys(stems.get(w, w) for w in textmod.tokens(text))
            )
        self.company: dict[int, str | None] = {}
        self.length: dict[int, int] = {}
        self.postings: dict[str, list[int]] = defaultdict(list)
        for pk, text, company in Memory.objects.values_list("id", "text", "company_key"):
            words = self.tokens(text)
            self.company[pk], self.length[pk] = company, max(1, len(words))
            for word in words:
                self.postings[word].append(pk)
        self._scope_cache: dict[str | None, tuple[int, float]] = {}

    def _in_scope(self, pk: int, key: str | None) -> bool:
        company = self.company[pk]
        return key is None or company is None or company == key

    def _stats(self, key: str | None) -> tuple[int, float]:
        if not self.scope_stats:
            key = None
        if key not in self._scope_cache:
            lengths = [n for pk, n in self.length.items() if self._in_scope(pk, key)]
            self._scope_cache[key] = (len(lengths), sum(lengths) / max(1, len(lengths)))
        return self._scope_cache[key]

    def __call__(self, query: str, key: str | None, depth: int) -> Ranked:
        from memory import text as textmod

        n, avg = self._stats(key)
        scores: dict[int, float] = defaultdict(float)
        for word in self.tokens(query)[: textmod.MAX_QUERY_TOKENS]:
            posting = self.postings.get(word, [])
            if self.scope_stats:
                df = sum(1 for pk in posting if self._in_scope(pk, key))
            else:
                df = len(posting)
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for pk in posting:
                if self._in_scope(pk, key):
                    norm = 1 - self.b + self.b * self.length[pk] / avg
                    scores[pk] += idf * (self.k1 + 1) / (1 + self.k1 * norm)
        return ordered(scores)[:depth]

    def coverage(self, query: str, key: str | None, depth: int) -> Ranked:
        """Share of the query's idf mass a fact holds (0-1): how much of what the query says
        the fact says, comparable across queries (a query word no fact holds counts too)."""
        from memory import text as textmod

        n, _ = self._stats(key)
        words = self.tokens(query)[: textmod.MAX_QUERY_TOKENS]
        idf = {
            w: math.log(
                1
                + (n - len(self.postings.get(w, [])) + 0.5) / (len(self.postings.get(w, [])) + 0.5)
            )
            for w in words
        }
        total = sum(idf.values()) or 1.0
        scores: dict[int, float] = defaultdict(float)
        for word in words:
            for pk in self.postings.get(word, []):
                if self._in_scope(pk, key):
                    scores[pk] += idf[word] / total
        return ordered(scores)[:depth]


def english_stems(dsn: str, texts: list[str]) -> dict[str, str]:
    """word -> its English Snowball stem, from PostgreSQL's own stemmer (no Python library)."""
    import psycopg

    from memory import text as textmod

    vocabulary = sorted({w for t in texts for w in textmod.tokens(t)})
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT w, coalesce((ts_lexize('english_stem', w))[1], w) FROM unnest(%s::text[]) AS w",
            (vocabulary,),
        ).fetchall()
    return dict(rows)


def rrf(
    lists: Sequence[Ranked], *, k: float = 60, weights: Sequence[float] | None = None
) -> Ranked:
    """Reciprocal rank fusion (Cormack et al. 2009): each list adds w / (k + rank)."""
    weights = weights or [1.0] * len(lists)
    scores: dict[int, float] = defaultdict(float)
    for weight, ranked in zip(weights, lists, strict=True):
        for rank, (pk, _) in enumerate(ranked, start=1):
            scores[pk] += weight / (k + rank)
    return ordered(scores)


def _minmax(ranked: Ranked) -> dict[int, float]:
    if not ranked:
        return {}
    top, low = ranked[0][1], ranked[-1][1]
    span = top - low
    return {pk: (s - low) / span if span > 0 else 1.0 for pk, s in ranked}


def score_fusion(lists: Sequence[Ranked], *, weights: Sequence[float]) -> Ranked:
    """Min-max normalise each list's scores within the query, then a weighted sum."""
    scores: dict[int, float] = defaultdict(float)
    for weight, ranked in zip(weights, lists, strict=True):
        for pk, s in _minmax(ranked).items():
            scores[pk] += weight * s
    return ordered(scores)


def weighted_sum(dense: Ranked, lexical: Ranked, *, weight: float) -> Ranked:
    """Raw cosine plus ``weight`` times a lexical score already on an absolute 0-1 scale."""
    scores: dict[int, float] = defaultdict(float)
    for pk, s in dense:
        scores[pk] += s
    for pk, s in lexical:
        scores[pk] += weight * s
    return ordered(scores)


def _zscores(ranked: Ranked) -> tuple[dict[int, float], float]:
    # The shipped fusion's standardisation (memory.semantic.search.standardise), on pairs.
    from memory.keyword import Hit
    from memory.semantic.search import standardise

    return standardise([Hit(pk, s) for pk, s in ranked])


def zscore_fusion(lists: Sequence[Ranked], *, weights: Sequence[float]) -> Ranked:
    """Each list's z-scores within the query (a fact a list lacks: that list's lowest),
    weighted and summed: what memory.semantic.search ships, for any lists."""
    normalised = [_zscores(ranked) for ranked in lists]
    ids = set().union(*(z for z, _ in normalised))
    return ordered(
        {
            pk: sum(w * z.get(pk, floor) for w, (z, floor) in zip(weights, normalised, strict=True))
            for pk in ids
        }
    )


def union_zscore_fusion(dense: Ranked, lexical: Ranked, *, dense_share: float) -> Ranked:
    """z-scores over the union of both lists' candidates, a fact a list lacks taking the
    dense list's lowest cosine or a coverage of 0 (its true value)."""
    cosine, coverage = dict(dense), dict(lexical)
    ids = list(cosine.keys() | coverage.keys())
    if not ids:
        return []
    low = min(cosine.values(), default=0.0)

    def z(values: list[float]) -> list[float]:
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
        return [(v - mean) / spread for v in values]

    d = z([cosine.get(pk, low) for pk in ids])
    w = z([coverage.get(pk, 0.0) for pk in ids])
    return ordered(
        {pk: dense_share * a + (1 - dense_share) * b for pk, a, b in zip(ids, d, w, strict=True)}
    )


def write_neighbours() -> dict[int, list[int]]:
    """Every live fact's neighbours (the live facts of its company written just before and
    after it), from the whole ledger at once: what memory.semantic.search.neighbours asks
    the ledger for, per query, for its candidates."""
    from memory.models import Memory

    beside: dict[int, list[int]] = defaultdict(list)
    last: dict[str | None, int] = {}
    for pk, company in Memory.objects.order_by("id").values_list("id", "company_key"):
        if company in last:
            beside[pk].append(last[company])
            beside[last[company]].append(pk)
        last[company] = pk
    return dict(beside)


def with_neighbours(
    lists: Sequence[Ranked],
    beside: dict[int, list[int]],
    *,
    dense_share: float,
    share: float,
    covered: float = 0.0,
) -> Ranked:
    """The shipped z fusion of (dense, lexical) (``covered``: see search.fuse; 0, its default
    here, is the fusion before it), then memory.semantic.search.with_context with ``share``,
    over the neighbours of the best 30 (what search.search asks the ledger for at the bench's
    limit of 10)."""
    from memory.keyword import Hit
    from memory.semantic import search

    dense, lexical = ([Hit(pk, s) for pk, s in ranked] for ranked in lists)
    fused = search.fuse(dense, lexical, dense_share=dense_share, covered=covered)
    near: dict[int, list[int]] = defaultdict(list)
    for hit in fused[:30]:
        for other in beside.get(hit.memory_id, []):
            near[hit.memory_id].append(other)
            near[other].append(hit.memory_id)
    lifted = search.with_context(fused, near, share=share)
    return [(h.memory_id, h.score) for h in lifted]


def with_cues(ranked: Ranked, query: str, **shares: float) -> Ranked:
    """memory.semantic.search.with_cues over pairs, at the shares given."""
    from memory.keyword import Hit
    from memory.semantic import search

    hits = search.with_cues([Hit(pk, s) for pk, s in ranked], query, **shares)
    return [(h.memory_id, h.score) for h in hits]


def scope_boost(ranked: Ranked, company_of: dict[int, str | None], key: str | None, boost: float):
    """The scope's own company facts raised by ``boost`` over global facts (scoped queries)."""
    if key is None:
        return ranked
    return ordered({pk: s + (boost if company_of.get(pk) == key else 0.0) for pk, s in ranked})


def dense_kept(ranked: Ranked, dense: Ranked, lexical: Ranked, *, keep: int) -> Ranked:
    """memory.semantic.search.keeping_dense over pairs."""
    from memory.keyword import Hit
    from memory.semantic import search

    hits = search.keeping_dense(
        *([Hit(pk, s) for pk, s in ranked] for ranked in (ranked, dense, lexical)), keep=keep
    )
    return [(h.memory_id, h.score) for h in hits]
