"""The assistant against a baseline, recomputed with numpy from the reviewers' raw scores.

    python3 baseline_compare_numpy.py SCORES.json

SCORES.json: {"weights": {criterion: weight}, "scores": [{"request": id, "source": "assistant" or
a baseline's name, "reviewer": r, "levels": {criterion: level}}]}. Each answer's level on a
criterion is the mean of its reviewers' levels, its weighted mean the weighted mean of those. For
each criterion and the weighted mean, prints the difference of the means over the answers
(assistant - baseline) and a 95% percentile-bootstrap interval from 20,000 rounds, each side
resampled on its own with numpy's generator: an independent computation, so its interval agrees
with stagegate's (2,000 rounds, its own generator) only to within the Monte Carlo error.
"""
import json
import sys
from collections import defaultdict

import numpy as np

data = json.load(open(sys.argv[1]))
weights = data["weights"]
by_request = defaultdict(list)
source_of = {}
for row in data["scores"]:
    by_request[row["request"]].append(row["levels"])
    source_of[row["request"]] = row["source"]

answers = {"assistant": defaultdict(list), "baseline": defaultdict(list)}
for request, rows in by_request.items():
    side = "assistant" if source_of[request] == "assistant" else "baseline"
    means = {c: np.mean([r[c] for r in rows]) for c in weights}
    for c in weights:
        answers[side][c].append(means[c])
    answers[side]["weighted mean"].append(
        sum(weights[c] * means[c] for c in weights) / sum(weights.values()))

rng = np.random.default_rng(20261207)
out = {}
for what in list(weights) + ["weighted mean"]:
    a = np.array(answers["assistant"][what])
    b = np.array(answers["baseline"][what])
    rounds = 20000
    da = a[rng.integers(0, len(a), size=(rounds, len(a)))].mean(axis=1)
    db = b[rng.integers(0, len(b), size=(rounds, len(b)))].mean(axis=1)
    low, high = np.percentile(da - db, [2.5, 97.5])
    out[what] = {"difference": float(a.mean() - b.mean()), "low": float(low),
                 "high": float(high), "assistant": len(a), "baseline": len(b)}
print(json.dumps(out))
