"""The judge calibration of tests/testdata/judge_calibration/levels.csv, computed independently of
stagegate with scikit-learn and the standard library, printed as JSON: per criterion the answers,
quadratic-weighted kappa, confusion matrix (rows the reviewers' consensus, columns the judge) and
bias. The consensus of an answer is statistics.median_low of its reviewers' levels (the median;
with an even count, the lower middle), as docs/report.md defines it.

Run by /usr/bin/python3 (Debian's python3-sklearn, python3-numpy; scripts/test-packages.txt)."""

import csv
import json
import statistics
import sys

import numpy as np
from sklearn.metrics import cohen_kappa_score, confusion_matrix

LEVELS = [1, 2, 3, 4, 5]

by_criterion = {}
with open(sys.argv[1], newline="") as f:
    for row in csv.DictReader(f):
        reviewers = [int(v) for v in row["reviewers"].split(";")]
        pairs = by_criterion.setdefault(row["criterion"], ([], []))
        pairs[0].append(statistics.median_low(reviewers))
        pairs[1].append(int(row["judge"]))

out = {}
for criterion, (consensus, judge) in by_criterion.items():
    out[criterion] = {
        "answers": len(consensus),
        "kappa": float(cohen_kappa_score(consensus, judge, weights="quadratic", labels=LEVELS)),
        "confusion": confusion_matrix(consensus, judge, labels=LEVELS).tolist(),
        "bias": float(np.mean(judge) - np.mean(consensus)),
    }
print(json.dumps(out))
