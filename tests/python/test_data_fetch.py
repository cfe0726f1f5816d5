"""`qkov-data fetch` and the data search path (docs/data.md), with the real
programs: every dataset copied from a mirror (../shared/data) into an empty
folder matches byte for byte; qkov-data reads the fetched files as a trial
does, and a preset submitted with QKOV_DATA pointing there reads them; one
changed byte in the mirror is refused naming the file and both checksums,
and nothing is written; a derived file with no published copy asks for a
mirror; a preset whose data is in no folder fails with the fetch command.
Downloads from the published addresses are not exercised here: the test
machine reaches no address outside loopback."""

import hashlib
import os
import shutil
import subprocess

import pytest

from conftest import Server

SHARED = os.environ.get(
    "QKOV_SHARED_DATA_DIR",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                 "shared", "data"))


def run(server_bin, *args, env=None, cwd=None):
    return subprocess.run([server_bin + "/" + args[0], *args[1:]],
                          capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.stop()


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_fetch_from_a_mirror_gives_files_the_presets_read(server, tmp_path):
    if not os.path.isdir(SHARED):
        pytest.skip("no ../shared/data beside the checkout")
    data = tmp_path / "data"
    r = run(server.bin, "qkov-data", "fetch", "all", "--from", SHARED,
            "--to", str(data))
    assert r.returncode == 0, r.stderr
    fetched = sorted(str(p.relative_to(data)) for p in data.rglob("*")
                     if p.is_file())
    assert len(fetched) == 28, fetched
    for rel in fetched:
        assert sha256(data / rel) == sha256(os.path.join(SHARED, rel)), rel
    # Again: every file is kept as it is.
    again = run(server.bin, "qkov-data", "fetch", "sva", "--to", str(data))
    assert again.returncode == 0 and again.stdout.count("present") == 10
    # Read as trials read them.
    vocab = str(data / "tokenizers/bert-base-uncased/vocab.txt")
    for fmt, path in (("hatexplain", "hatexplain/test.jsonl"),
                      ("sva_filtered", "sva/subj_agr_filtered.text")):
        r = run(server.bin, "qkov-data", "--format=" + fmt,
                "--path=" + str(data / path), "--vocab=" + vocab, "--show=0")
        assert r.returncode == 0, r.stderr
    r = run(server.bin, "qkov-data", "--format=squad",
            "--path=" + str(data / "squad/dev-v1.1-first5.json"),
            "--encoder=" + str(data / "tokenizers/gpt2/encoder.json"),
            "--merges=" + str(data / "tokenizers/gpt2/vocab.bpe"), "--show=0")
    assert r.returncode == 0, r.stderr
    # A preset submitted from a folder with no ../shared/data, with
    # QKOV_DATA set: its data paths are the fetched files.
    env = dict(os.environ, QKOV_DATA=str(data), HOME=str(tmp_path))
    r = run(server.bin, "qkov", "--server=" + server.address,
            "--token_file=" + server.token_file("user"), "submit", "--preset",
            "paper-sva", "--quick", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import qkov
    with qkov.connect(server.address,
                      token_file=server.token_file("user")) as q:
        trial = q.trial(q.trials("paper-sva-quick")["trial_id"][0])
    assert trial["config"]["training.text.train.path"] == \
        str(data / "sva/subj_agr_filtered.text")


def test_a_changed_byte_is_refused_naming_both_checksums(server, tmp_path):
    if not os.path.isdir(SHARED):
        pytest.skip("no ../shared/data beside the checkout")
    mirror = tmp_path / "mirror"
    shutil.copytree(os.path.join(SHARED, "sva"), mirror / "sva")
    target = mirror / "sva" / "numpred.test.3"
    good = sha256(target)
    with open(target, "r+b") as f:
        f.seek(1000)
        byte = f.read(1)
        f.seek(1000)
        f.write(bytes([byte[0] ^ 0x01]))
    data = tmp_path / "data"
    r = run(server.bin, "qkov-data", "fetch", "sva", "--from", str(mirror),
            "--to", str(data))
    assert r.returncode == 1
    assert "sva/numpred.test.3" in r.stderr
    assert sha256(target) in r.stderr and good in r.stderr
    assert not (data / "sva" / "numpred.test.3").exists()
    assert not (data / "sva" / "numpred.test.3.partial").exists()


def test_derived_files_ask_for_a_mirror_and_names_are_checked(server,
                                                             tmp_path):
    r = run(server.bin, "qkov-data", "fetch", "squad", "--to",
            str(tmp_path / "data"))
    assert r.returncode == 1
    assert "squad/dev-v1.1-all.json" in r.stderr and "--from" in r.stderr
    r = run(server.bin, "qkov-data", "fetch", "imagenet")
    assert r.returncode == 2 and "unknown dataset 'imagenet'" in r.stderr


def test_a_preset_without_its_data_names_the_fetch_command(server, tmp_path):
    env = dict(os.environ, HOME=str(tmp_path))
    env.pop("QKOV_DATA", None)
    env.pop("XDG_CACHE_HOME", None)
    r = run(server.bin, "qkov", "--server=" + server.address,
            "--token_file=" + server.token_file("user"), "submit", "--preset",
            "paper-hatexplain", "--quick", env=env, cwd=tmp_path)
    assert r.returncode != 0
    assert "qkov-data fetch hatexplain tokenizers" in r.stderr
    # Overrides that point every data path at files elsewhere are enough.
    if os.path.isdir(SHARED):
        shared = os.path.abspath(SHARED)
        r = run(server.bin, "qkov", "--server=" + server.address,
                "--token_file=" + server.token_file("user"), "submit",
                "--preset", "paper-sva", "--quick", "--set",
                "name=sva-elsewhere", "--set",
                "training.text.train.path=" + shared +
                "/sva/subj_agr_filtered.text", "--set",
                "training.text.vocab_path=" + shared +
                "/tokenizers/bert-base-uncased/vocab.txt", env=env,
                cwd=tmp_path)
        assert r.returncode == 0, r.stderr
