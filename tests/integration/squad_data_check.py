#!/usr/bin/python3
"""Checks `qkov-data --format=squad --json` against the SQuAD file itself,
without the project's code: GPT-2's byte-to-unicode table (as in OpenAI's
encoder.py) turns each piece back into bytes, so that

  - the prompt reads "Q: {question} C: {context crop} A:";
  - the pieces marked in answer_mask hold the question's first answer;
  - tokens, ids and answer_mask have one entry per prompt position;
  - every id is the piece's id in encoder.json.

  squad_data_check.py QKOV_DATA_JSONL SQUAD_JSON ENCODER_JSON

Prints "checked N examples" and exits 0, or names the first example that
disagrees and exits 1.
"""
import json
import sys


def bytes_to_unicode():
    bs = (list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1))
          + list(range(ord('®'), ord('ÿ') + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def main(out_path, squad_path, encoder_path):
    to_byte = {c: b for b, c in bytes_to_unicode().items()}
    encoder = json.load(open(encoder_path, encoding='utf-8'))
    answers, questions = {}, {}
    for article in json.load(open(squad_path, encoding='utf-8'))['data']:
        for paragraph in article['paragraphs']:
            for qa in paragraph['qas']:
                if qa.get('answers'):
                    answers[qa['id']] = qa['answers'][0]['text']
                    questions[qa['id']] = qa['question']

    def text(pieces):
        return bytes(to_byte[c] for p in pieces for c in p).decode('utf-8', 'replace')

    n = 0
    for line in open(out_path, encoding='utf-8'):
        ex = json.loads(line)
        qid, tokens, ids, mask = ex['id'], ex['tokens'], ex['ids'], ex['answer_mask']
        fail = None
        if not (len(tokens) == len(ids) == len(mask)):
            fail = 'lengths differ'
        elif any(encoder.get(t) != i for t, i in zip(tokens, ids)):
            fail = 'an id is not its piece\'s id in encoder.json'
        else:
            prompt = text(tokens)
            marked = text([t for t, m in zip(tokens, mask) if m])
            want = f'Q: {questions[qid]} C: '
            if not prompt.startswith(want) or not prompt.endswith(' A:'):
                fail = f'prompt {prompt[:80]!r}... is not "Q: ... C: ... A:"'
            elif answers[qid].strip() not in marked:
                fail = f'marked pieces {marked!r} lack the answer {answers[qid]!r}'
        if fail:
            print(f'{qid}: {fail}')
            return 1
        n += 1
    print(f'checked {n} examples')
    return 0 if n > 0 else 1


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:4]))
