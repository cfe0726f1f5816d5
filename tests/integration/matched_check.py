#!/usr/bin/env python3
"""Independent check of the matched comparison (docs/metrics.md).

Reads `qkov export --per point` CSV, and for each arm (parameterization,
lr_ratio) and level prints: how many trials reach the level, and the mean of
METRIC over those trials at the first step where the trailing mean of
REFERENCE over WINDOW reports gets to the level or past it (in the direction
the reference moves over the sweep), both linearly interpolated.
Written from the definition, sharing no code with qkov.

usage: matched_check.py POINTS.csv REFERENCE LEVEL[,LEVEL...] WINDOW METRIC
prints: parameterization,lr_ratio,level,reached,trials,mean
"""
import csv
import math
import sys
from collections import defaultdict


def crossing(points, level, down):
    """Interpolated step where the curve first gets to level or past it,
    going down (or up); the first report's step if it is already there;
    None if never."""
    prev = None
    for step, value in points:
        if math.isnan(value):
            continue
        if (down and value <= level) or (not down and value >= level):
            if prev is None:
                return float(step)
            s0, v0 = prev
            t = 1.0 if value == v0 else (level - v0) / (value - v0)
            return s0 + t * (step - s0)
        prev = (step, value)
    return None


def at(points, step):
    for i, (s, v) in enumerate(points):
        if s == step:
            return v
        if s > step:
            if i == 0:
                return float("nan")
            s0, v0 = points[i - 1]
            return v0 + (step - s0) / (s - s0) * (v - v0)
    return float("nan")


def main():
    path, reference, levels, window, metric = sys.argv[1:6]
    levels = [float(x) for x in levels.split(",")]
    window = int(window)
    curves = defaultdict(lambda: defaultdict(list))
    arm_of = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            trial = row["trial_id"]
            arm_of[trial] = (row["parameterization"], float(row["lr_ratio"]))
            curves[trial][row["name"]].append(
                (int(row["step"]), float(row["value"])))
    for trial in curves:
        for name in curves[trial]:
            curves[trial][name].sort()
    smoothed = {}
    for t in curves:
        ref = curves[t][reference]
        smoothed[t] = [(ref[i][0],
                        sum(v for _, v in ref[i + 1 - window:i + 1]) / window)
                       for i in range(window - 1, len(ref))]
    # The reference's direction over the sweep: down when its curves fall
    # in sum from first to last report.
    change = sum(c[-1][1] - c[0][1] for c in smoothed.values() if c)
    down = change < 0
    arms = sorted(set(arm_of.values()))
    for arm in arms:
        trials = [t for t in curves if arm_of[t] == arm]
        for level in levels:
            values = []
            for t in trials:
                step = crossing(smoothed[t], level, down)
                if step is not None:
                    values.append(at(curves[t][metric], step))
            mean = sum(values) / len(values) if values else float("nan")
            print("%s,%.10g,%.10g,%d,%d,%.10g" %
                  (arm[0], arm[1], level, len(values), len(trials), mean))


if __name__ == "__main__":
    main()
