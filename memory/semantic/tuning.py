"""The semantic ranking's constants, in one place: each with the data it was chosen on and the
bench/recall_eval.py command that reproduces the choice (docs/semantic-index.md has the
figures). Change one only with that command's figures on both datasets.

LoCoMo = the development split (../shared/data/locomo-dev, 5 conversations, 760 questions);
job search = tests/data/paraphrases.jsonl + bench/data/jobsearch.jsonl. "CV" is
leave-one-conversation-out: a value is picked on four conversations and scored on the fifth.
"""

# The dense half's share of the fused score (the lexical half has the rest), each half put on
# its query's own scale (z-scores). LoCoMo CV picked 0.4 in every fold.
#   recall_eval.py --locomo DIR --cv   (family "dense share")
DENSE_SHARE = 0.4

# The lexical half counts fully once its best candidate holds this share of the question's idf
# mass, and proportionally less below. LoCoMo CV; it also decides the paraphrases.
#   recall_eval.py --jobsearch --locomo DIR --cv   (family "coverage")
COVERED = 0.7

# The share of its best neighbour's fused score a fact gains (the live facts written just
# before and after it in its company). LoCoMo CV over 0 (off) to 0.5.
#   recall_eval.py --locomo DIR --cv   (family "neighbour")
NEIGHBOUR_SHARE = 0.4

# What a candidate written in a span the question names gains, in fused (z-score) units.
# LoCoMo CV (the folds picked 1.5 or 3, 0.002 apart; the smaller one leaves a much better
# match written at another time where it was).
#   recall_eval.py --locomo DIR --cv   (family "date lift")
DATE_SHARE = 1.5

# What a candidate whose subject the question names gains. LoCoMo CV.
#   recall_eval.py --locomo DIR --cv   (family "subject lift")
SUBJECT_SHARE = 2.0

# The dense half's best few facts keep a place in the first five whatever the fusion and the
# cues do: a question sharing no word with its fact is the dense half's alone to find.
#   recall_eval.py --jobsearch --locomo DIR --cv   (family "keep")
DENSE_KEPT = 0
