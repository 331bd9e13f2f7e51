"""The semantic ranking's constants, in one place: each with the data it was chosen on and the
bench/recall_eval.py command that reproduces the choice (docs/semantic-index.md has the
figures). Change one only with that command's figures on both datasets.

LoCoMo = its development split (5 conversations, 760 questions); job search =
tests/data/paraphrases.jsonl + bench/data/jobsearch.jsonl. CV = leave-one-conversation-out on
LoCoMo: a value is picked on four conversations and scored on the fifth. Every figure below
comes from one run of

    .venv/bin/python bench/recall_eval.py --jobsearch --locomo ../shared/data/locomo-dev --cv \
        --skip mem0,bm25s,bm25stem,coverage_stem,dense_boost

whose family rows ("<constant> <value> (the rest as in tuning)") vary one constant at a time.
"""

# The dense half's share of the fused score (the lexical half has the rest), each half put on
# its query's own scale (z-scores). LoCoMo R@5 0.3: 0.675, 0.4: 0.693, 0.5: 0.690, 0.6: 0.691;
# CV picked 0.4 in all five folds. Job search: equal at every value.
DENSE_SHARE = 0.4

# The lexical half counts fully once its best candidate holds this share of the question's
# idf mass, and proportionally less below. LoCoMo R@5 0 (off): 0.683, 0.5: 0.689, 0.7: 0.693,
# 0.85: 0.692, 1: 0.690; CV 0.691 (0.7 in four folds). Job-search paraphrases: 0.705 off,
# 0.727 on. It also says when the lexical half is weak (DENSE_KEPT).
COVERED = 0.7

# The share of its best neighbour's fused score a fact gains (the live facts written just
# before and after it in its company). LoCoMo R@5 0 (off): 0.648, 0.2: 0.678, 0.4: 0.693,
# 0.5: 0.691; CV picked 0.4 in all five folds.
NEIGHBOUR_SHARE = 0.4

# What a candidate written in a span the question names gains, in fused (z-score) units.
# LoCoMo R@5 0 (off): 0.672, 1: 0.688, 1.5: 0.693, 3: 0.693; CV picked 1.5 in all five folds
# (the smaller of two equal values leaves a much better match written at another time where
# it was).
DATE_SHARE = 1.5

# What a candidate whose subject the question names gains. LoCoMo R@5 0 (off): 0.647,
# 1: 0.685, 2: 0.693, 3: 0.688; CV picked 2 in all five folds.
SUBJECT_SHARE = 2.0

# When the lexical half is weak (best coverage under COVERED), the dense half's best
# DENSE_KEPT facts keep a place in the top five whatever the fusion and the cues do: a
# question sharing no word with its fact is the dense half's alone to find. A guarantee, not
# a tuned weight: 1 costs LoCoMo 0.004 R@5 (0.693 → 0.689; 2: 0.682, 3: 0.672) and changes
# no job-search figure; the family "keep" in the bench.
DENSE_KEPT = 1
