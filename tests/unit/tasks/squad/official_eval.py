#!/usr/bin/env python3
"""Recomputes SQuAD F1/EM the way the official evaluate-v1.1.py defines them
and compares with qkov's values.

Reads JSON Lines {"prediction", "golds", "f1", "em"} (written by
squad_eval_test) and prints the number of lines whose values differ by more
than 1e-12, then exits 1 if any did. The definitions below are the official
script's normalize_answer, f1_score and exact_match_score, each maximised
over the gold answers as its metric_max_over_ground_truths does.
"""
import collections
import json
import re
import string
import sys


def normalize_answer(s):
    def remove_articles(text):
        return re.sub(r'\b(a|an|the)\b', ' ', text)

    def white_space_fix(text):
        return ' '.join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return ''.join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def f1_score(prediction, ground_truth):
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = (collections.Counter(prediction_tokens)
              & collections.Counter(ground_truth_tokens))
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def exact_match_score(prediction, ground_truth):
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def main(path):
    lines = differ = 0
    with open(path, encoding='utf-8') as f:
        for line in f:
            case = json.loads(line)
            lines += 1
            f1 = max(f1_score(case['prediction'], g) for g in case['golds'])
            em = max(float(exact_match_score(case['prediction'], g))
                     for g in case['golds'])
            if abs(f1 - case['f1']) > 1e-12 or abs(em - case['em']) > 1e-12:
                differ += 1
                if differ <= 5:
                    print('differs:', json.dumps(case), 'official f1', f1,
                          'em', em)
    print(lines, 'cases,', differ, 'differ')
    return 1 if differ or not lines else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
