#!/usr/bin/python3
"""The dashboard in a real headless Chromium against a real qkov-server.

A server with tokens and its SQLite file, a real worker that trains a small
synthetic sweep, then Chromium (Debian's) through the DevTools protocol:
  - every page (login, sweeps, sweep, trial) loads without console errors,
    exceptions or failed loads, and is saved as a screenshot;
  - the login form sets the session cookie the API then accepts;
  - the ratio plot's points are SQL over the database (mean and count over
    seeds per parameterization and ratio);
  - trials that finish while the sweep page is open show up without a reload
    (server-sent events), and the plot follows;
  - a theory sweep's page draws Fig. 4, a fixed-attention sweep's Fig. 3,
    whose points are SQL over the database too;
  - a sweep with named arms shows each trial's arm, as stored;
  - hostile strings (bidirectional-text controls, HTML, terminal escapes, a
    formula-leading description, a worker's name) are shown escaped, never
    as markup, and a finished sweep's header says so plainly.
(The CSV export's formula cells: tests/integration/http_attack_test.cc,
which reports them as a hostile worker over gRPC.)

  dashboard_browser_test.py BIN_DIR ARTIFACT_DIR
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else 'build/bin'
ARTIFACTS = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else 'build/test-artifacts/dashboard'
READER = 'reader-token-0123456789'
USER = 'user-token-0123456789ab'
WORKER = 'worker-token-0123456789'
ADMIN = 'admin-token-0123456789ab'

SWEEP = """name: browse
description: the browser test's sweep
axes: {{parameterization: [FAFO, CACO], lr_ratio: [1, 20], eta_ov: [0.1], seed: {seeds}}}
training: {{max_steps: 300, report_every: 50, evaluation: {{num_examples: 128}}}}
"""

ARMS = """name: arms
axes:
  parameterization: [FAFO]
  eta_ov: [0.1]
  seed: [1, 2]
  arm:
    - {name: baseline, lr_ratio: 1}
    - {name: faster, lr_ratio: 20, training: {max_steps: 250}}
training: {max_steps: 300, report_every: 50, evaluation: {num_examples: 128}}
"""


def read(path):
    with open(path) as f:
        return f.read()


def wait_file(path, proc, timeout=30):
    deadline = time.time() + timeout
    while not (os.path.exists(path) and read(path).strip()):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError(f'{path} never appeared')
        time.sleep(0.02)
    return int(read(path))


class DashboardInBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(ARTIFACTS, exist_ok=True)
        cls.dir = tempfile.mkdtemp(prefix='qkov-dashboard-')
        d = cls.dir
        with open(f'{d}/tokens', 'w') as f:
            f.write(f'worker {WORKER}\nuser {USER} alice\nread-only {READER}\n'
                    f'admin {ADMIN} root\n')
        for name, token in (('user', USER), ('worker', WORKER), ('admin', ADMIN)):
            with open(f'{d}/{name}.token', 'w') as f:
                f.write(token + '\n')
        cls.db = f'{d}/results.db'
        with open(f'{d}/server.log', 'w') as log:
            cls.server = subprocess.Popen(
                [f'{BIN}/qkov-server', f'--db={cls.db}', '--listen=127.0.0.1:0',
                 f'--port_file={d}/port', f'--token_file={d}/tokens',
                 '--http_listen=127.0.0.1:0', f'--http_port_file={d}/http.port'],
                stdout=log, stderr=subprocess.STDOUT)
        cls.grpc = f'127.0.0.1:{wait_file(f"{d}/port", cls.server)}'
        cls.base = f'http://127.0.0.1:{wait_file(f"{d}/http.port", cls.server)}'
        cls.submit([1, 2])
        cls.train()
        cls.browser = cdp.Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.server.terminate()
        cls.server.wait(30)
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def qkov(cls, *args):
        r = subprocess.run([f'{BIN}/qkov', f'--server={cls.grpc}',
                            f'--token_file={cls.dir}/user.token', *args],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError(f'qkov {args}: {r.stderr}')
        return r.stdout

    @classmethod
    def submit(cls, seeds):
        path = f'{cls.dir}/sweep.yaml'
        with open(path, 'w') as f:
            f.write(SWEEP.format(seeds=seeds))
        cls.qkov('submit', path)

    @classmethod
    def train(cls, wait=True):
        with open(f'{cls.dir}/worker.log', 'a') as log:
            w = subprocess.Popen([f'{BIN}/qkov-worker', f'--server={cls.grpc}',
                                  f'--token_file={cls.dir}/worker.token', '--exit_when_idle'],
                                 stdout=log, stderr=subprocess.STDOUT)
        if wait:
            assert w.wait(300) == 0, read(f'{cls.dir}/worker.log')[-3000:]
        return w

    def sql(self, query):
        with sqlite3.connect(f'file:{self.db}?mode=ro', uri=True) as c:
            return c.execute(query).fetchall()

    def sql_ratio_points(self, metric):
        return {(p, r): (mean, n) for p, r, mean, n in self.sql(
            "SELECT t.parameterization, t.lr_ratio, AVG(r.value), COUNT(*) FROM trials t "
            "JOIN results r ON r.trial_id = t.trial_id JOIN sweeps s ON s.sweep_id = t.sweep_id "
            f"WHERE s.name = 'browse' AND r.name = '{metric}' GROUP BY 1, 2")}

    def page_points(self):
        return {(p['parameterization'], p['lr_ratio']): (p['mean'], p['n'])
                for p in self.browser.evaluate('window.qkov.ratioPoints')}

    def assertPointsMatchSql(self):
        metric = self.browser.evaluate("document.querySelector('.panel select').value")
        self.assertEqual(metric, 'distinct_attention')
        want = self.sql_ratio_points(metric)
        got = self.page_points()
        self.assertEqual(set(got), set(want))
        for key, (mean, n) in want.items():
            self.assertAlmostEqual(got[key][0], mean, places=12, msg=key)
            self.assertEqual(got[key][1], n, msg=key)

    def cli_matched(self, sweep, levels, window):
        """(param, ratio, level) -> (reached 'k/n', mean text) from `qkov
        results --matched`: the CLI's numbers, over gRPC."""
        out = self.qkov('results', sweep, '--matched',
                        'train_loss' + ('=' + ','.join(repr(l) for l in levels) if levels else ''),
                        '--window', str(window), '--metrics', 'distinct_attention',
                        '--by', 'parameterization,lr_ratio', '--format', 'csv')
        rows = {}
        for line in out.splitlines()[1:]:
            f = line.split(',')
            rows[(f[0], float(f[1]), float(f[2]))] = (f[3], f[5])
        return rows

    def assertMatchedAgreesWithCli(self, sweep, points, levels, window):
        """Each page point (arm 'PARAM RATIO', level, mean, reached, trials)
        is the CLI's row, to the CLI's 4 significant digits."""
        want = self.cli_matched(sweep, levels, window)
        self.assertEqual(len(points), len(want), (points, want))
        for p in points:
            param, ratio = p['arm'].split(' ')
            reached, mean = want[(param, float(ratio), float(f"{p['level']:.4g}"))]
            self.assertEqual(reached, f"{p['reached']}/{p['trials']}", p)
            if p['reached'] == 0:
                self.assertEqual(mean, '-', p)
            else:
                self.assertAlmostEqual(p['mean'], float(mean), delta=5e-4 * abs(float(mean)), msg=p)

    def assertNoErrors(self):
        self.assertEqual(self.browser.errors, [])

    def shot(self, name):
        path = os.path.join(ARTIFACTS, name)
        self.browser.screenshot(path)
        with open(path, 'rb') as f:
            self.assertEqual(f.read(8), b'\x89PNG\r\n\x1a\n')

    def test_pages_plot_and_live_updates(self):
        b = self.browser
        # Without a session the page sends the reader to the login form.
        b.url = f'{self.base}/'
        b.call('Page.navigate', url=b.url)
        b.wait_for("location.pathname === '/login' && document.readyState === 'complete'",
                   what='the redirect to /login')
        # The one error that page may report: the API's 401 that sent it here.
        self.assertTrue(b.errors and all('401' in text for _, text in b.errors), b.errors)
        b.errors.clear()
        b.open(f'{self.base}/login?failed=token', ready="!document.getElementById('failed').hidden")
        self.shot('login.png')
        self.assertNoErrors()
        b.evaluate(f"document.querySelector('input[name=token]').value = '{READER}';"
                   "document.querySelector('form.login').submit(); true")
        b.wait_for(f"location.href === '{self.base}/' && window.qkov && window.qkov.ready",
                   what='the sweeps page after logging in')
        b.url = f'{self.base}/'
        self.assertEqual(b.evaluate("document.cookie"), '', 'the session cookie is HttpOnly')
        self.assertEqual(b.evaluate("document.querySelector('tr[data-sweep=browse] td:nth-child(3)').textContent"),
                         '8/8')
        self.shot('sweeps.png')
        self.assertNoErrors()

        b.open(f'{self.base}/sweeps/browse')
        self.assertPointsMatchSql()
        self.assertEqual(b.evaluate('window.qkov.tableRows.length'), 8)
        self.assertEqual(b.evaluate("document.querySelectorAll('#trials tbody tr').length"), 8)
        # The DTAP grid: one heatmap per (parameterization, ratio).
        self.assertEqual(b.evaluate('window.qkov.dtapGroups'), 4)
        self.assertEqual(b.evaluate("document.querySelectorAll('#dtap-grid table.heat').length"), 4)
        self.shot('sweep.png')
        self.assertNoErrors()

        # A third seed: four more trials, trained while the page stays open.
        b.evaluate('window.sameDocument = true')
        events_before = b.evaluate('window.qkov.events')
        self.submit([1, 2, 3])
        b.wait_for("document.getElementById('sweep-counts').textContent.endsWith('of 12')",
                   what='the new trials in the header')
        worker = self.train(wait=False)
        b.wait_for("document.getElementById('sweep-counts').textContent.startsWith('12 done')",
                   timeout=300, what='12 trials done in the header')
        self.assertEqual(worker.wait(60), 0)
        b.wait_for("window.qkov.tableRows.length === 12 && "
                   "window.qkov.tableRows.every(r => r.state === 'DONE')",
                   what='every trial done in the table')
        b.wait_for("window.qkov.ratioPoints.length === 4 && window.qkov.ratioPoints.every(p => p.n === 3)",
                   what='the plot over three seeds')
        self.assertTrue(b.evaluate('window.sameDocument === true'), 'the page was reloaded')
        self.assertGreater(b.evaluate('window.qkov.events'), events_before)
        self.assertPointsMatchSql()
        self.assertEqual(b.evaluate("document.querySelectorAll('#trials tbody td.state').length"), 12)
        # The matched panel: distinct-token attention where each trial's
        # training loss (mean of 5 reports) first reaches 5 levels the server
        # chose, per arm, as `qkov results --matched train_loss` gives it.
        b.wait_for("window.qkov.matched && window.qkov.matched.points && "
                   "window.qkov.matched.points.length > 0 && "
                   "window.qkov.matched.points.every(p => p.trials === 3)",
                   what='the matched panel over three seeds')
        self.assertEqual(b.evaluate("document.getElementById('matched-metric').value"), 'distinct_attention')
        self.assertEqual(b.evaluate("document.getElementById('matched-reference').value"), 'train_loss')
        window = int(b.evaluate("document.getElementById('matched-window').value"))
        self.assertEqual(window, 1)  # 6 reports: a quarter, rounded down
        self.assertMatchedAgreesWithCli('browse', b.evaluate('window.qkov.matched.points'), [], window)
        self.assertIn('auto: ', b.evaluate("document.getElementById('matched-levels').placeholder"))
        # A level no trial reaches is said under the panel, not as a page
        # error.
        b.evaluate("document.getElementById('matched-levels').value = '1e-9';"
                   "[...document.querySelectorAll('#matched-panel button')][0].click(); true")
        b.wait_for("window.qkov.matched && window.qkov.matched.error !== undefined",
                   what='the unreached level in the panel')
        self.assertIn('no trial reaches train_loss = 1e-09',
                      b.evaluate("document.getElementById('matched-note').textContent"))
        self.assertTrue(b.evaluate("document.getElementById('error').hidden"))
        # The one error the browser logs: that request's 400.
        asked = [e for e in b.errors if 'level=1e-9' in e[1] and '400' in e[1]]
        self.assertEqual(len(asked), 1, b.errors)
        b.errors.remove(asked[0])
        b.evaluate("document.getElementById('matched-levels').value = '';"
                   "[...document.querySelectorAll('#matched-panel button')][0].click(); true")
        b.wait_for("window.qkov.matched && window.qkov.matched.points !== undefined",
                   what='the matched panel again')
        self.shot('sweep-live.png')
        self.assertNoErrors()

        # Sorting happens on the server: the table's first row is the largest.
        b.evaluate("[...document.querySelectorAll('#trials th')].find(th => th.textContent === "
                   "'distinct_attention').click(); true")
        b.wait_for("document.querySelector('#trials th.sorted') !== null", what='the sorted column')
        b.evaluate("[...document.querySelectorAll('#trials th')].find(th => th.textContent === "
                   "'distinct_attention').click(); true")
        b.wait_for("document.querySelector('#trials th.sorted.desc') !== null", what='descending order')
        top = b.evaluate("window.qkov.tableRows[0].values.distinct_attention")
        (best,), = self.sql("SELECT MAX(value) FROM results WHERE name = 'distinct_attention'")
        self.assertAlmostEqual(top, best, places=12)

        trial = b.evaluate('window.qkov.tableRows[0].trial_id')
        b.open(f'{self.base}/trials/{trial}')
        config = b.evaluate("document.getElementById('config').textContent")
        self.assertIn('lr_ratio: ', config)
        self.assertIn('\n  max_steps: 300\n', config)
        self.assertEqual(b.evaluate("document.querySelectorAll('#attempts tbody tr').length"), 1)
        self.assertGreater(b.evaluate("document.querySelectorAll('#metric-charts canvas').length"), 2)
        self.assertGreater(b.evaluate("document.querySelectorAll('table.heat').length"), 0)
        self.shot('trial.png')
        self.assertNoErrors()

        # The paper's other figures: Fig. 4 for a theory sweep, Fig. 3 for a
        # fixed-attention sweep (shortened to 300 steps).
        self.qkov('submit', '--preset', 'paper-theory')
        self.qkov('submit', '--preset', 'paper-fixed-attention', '--quick',
                  '--set', 'training.max_steps=300')
        # A sweep with named arms (docs/sweep-files.md, "Arms").
        with open(f'{self.dir}/arms.yaml', 'w') as f:
            f.write(ARMS)
        self.qkov('submit', f'{self.dir}/arms.yaml')
        # An adaptive sweep: at 300 steps attention stays uniform, so the
        # search ends on its 3 coarse probes, never reaching 0.9.
        self.qkov('submit', '--preset', 'paper-ratio-search', '--quick',
                  '--set', 'training.max_steps=300', '--set', 'axes.seed=[1]',
                  '--set', 'search.coarse_points=3', '--set', 'search.target=0.9')
        self.train()
        b.open(f'{self.base}/sweeps/paper-theory', ready='window.qkov && window.qkov.curveFigureTrials === 5')
        # Fig. 4 as the theory package describes it (CurveFigure): 4 panels
        # against time, 3 at the loss thresholds, 1 with the overlay.
        self.assertEqual(b.evaluate('window.qkov.curveFigurePanels'), 8)
        self.assertEqual(b.evaluate("document.querySelectorAll('#paper-figures canvas').length"), 8)
        # The task table's theory entry: no ratio figure, no step curves.
        self.assertIsNone(b.evaluate("document.getElementById('ratio')"))
        self.assertIsNone(b.evaluate("document.getElementById('curves')"))
        # Overlaid: each of the trained sweep's (parameterization, ratio)
        # arms' distinct-token attention at matched training loss (mean of
        # 5 reports), as `qkov results --matched` computes it at the same
        # levels.
        b.evaluate("(() => { const s = document.getElementById('overlay');"
                   " s.value = 'browse'; s.dispatchEvent(new Event('change')); })()")
        b.wait_for('window.qkov.overlayPoints && window.qkov.overlayPoints.length > 0')
        self.assertIn('overlay=browse', b.evaluate('location.search'))
        points = b.evaluate('window.qkov.overlayPoints')
        levels = sorted({p['x'] for p in points}, reverse=True)
        self.assertGreaterEqual(len(levels), 2, points)
        want = self.cli_matched('browse', levels, 5)
        reached = {k: v for k, v in want.items() if v[1] != '-'}
        self.assertEqual(len(points), len(reached), (points, want))
        for p in points:
            param, ratio = p['label'].split(' r=')
            count, mean = want[(param, float(ratio), float(f"{p['x']:.4g}"))]
            self.assertEqual(count, f"{p['reached']}/{p['trials']}", p)
            self.assertAlmostEqual(p['y'], float(mean), delta=5e-4 * abs(float(mean)), msg=p)
        self.shot('theory.png')
        b.evaluate("document.getElementById('theory_alpha-0-panel').scrollIntoView()")
        self.shot('theory-overlay.png')
        self.assertNoErrors()
        b.open(f'{self.base}/sweeps/paper-fixed-attention-quick',
               ready='window.qkov && window.qkov.ready && window.qkov.fixedAttention')
        series = b.evaluate('window.qkov.fixedAttention')
        self.assertEqual(sorted(series), ['CACO', 'FAFO'])
        # Its entry: curves, no ratio figure, alpha as a column of the table.
        self.assertIsNone(b.evaluate("document.getElementById('ratio')"))
        self.assertTrue(b.evaluate("!!document.getElementById('curves')"))
        self.assertIn('alpha', b.evaluate("[...document.querySelectorAll('#trials th')].map((h) => h.textContent)"))
        losses = {(p, round(a, 6)): l for p, a, l in self.sql(
            "SELECT t.parameterization, json_extract(t.config_json, '$.alpha'), r.value FROM trials t "
            "JOIN results r ON r.trial_id = t.trial_id JOIN sweeps s ON s.sweep_id = t.sweep_id "
            "WHERE s.name = 'paper-fixed-attention-quick' AND r.name = 'loss'")}
        self.assertEqual(len(losses), 10)
        for param, points in series.items():
            self.assertEqual([p['x'] for p in points], [0.2, 0.4, 0.6, 0.8, 1])
            for p in points:
                self.assertAlmostEqual(p['y'], losses[(param, p['x'])], places=12)
        self.shot('fixed-attention.png')
        self.assertNoErrors()

        # The search's table shows what the searches row holds.
        b.open(f'{self.base}/sweeps/paper-ratio-search-quick',
               ready="!!(window.qkov && window.qkov.ready && document.getElementById('searches'))")
        (state, outcome), = self.sql(
            "SELECT state, outcome_json FROM searches JOIN sweeps USING (sweep_id) "
            "WHERE name = 'paper-ratio-search-quick'")
        self.assertEqual(state, 'never_reached')
        cells = b.evaluate("[...document.querySelectorAll('#searches tr[data-search] td')]"
                           ".map((td) => td.textContent)")
        self.assertEqual(cells[:3], ['FAFO', '0.1', 'never_reached'])
        self.assertEqual(cells[3:5], ['100', '-'])  # below: 100; nothing reached
        self.assertEqual(cells[7], str(len(json.loads(outcome)['probes'])))
        self.assertEqual(cells[7], '3')
        self.shot('search.png')
        self.assertNoErrors()

        # The arms sweep's table has an arm column, each row its trial's
        # stored arm, and each arm's trials trained its own settings.
        b.open(f'{self.base}/sweeps/arms',
               ready='window.qkov && window.qkov.ready && window.qkov.tableRows.length === 4')
        heads = b.evaluate("[...document.querySelectorAll('#trials th')].map((h) => h.textContent)")
        self.assertEqual(heads[:2], ['trial', 'arm'], heads)
        shown = dict(b.evaluate("[...document.querySelectorAll('#trials tbody tr')]"
                                ".map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent])"))
        # (int64 settings are JSON strings in the stored config)
        stored = {t: (arm, int(steps)) for t, arm, steps in self.sql(
            "SELECT t.trial_id, json_extract(t.config_json, '$.arm'), "
            "json_extract(t.config_json, '$.training.max_steps') FROM trials t "
            "JOIN sweeps s ON s.sweep_id = t.sweep_id WHERE s.name = 'arms'")}
        self.assertEqual(shown, {t: arm for t, (arm, _) in stored.items()})
        self.assertEqual(sorted(set(stored.values())), [('baseline', 300), ('faster', 250)])
        self.shot('arms.png')
        self.assertNoErrors()

        b.open(f'{self.base}/sweeps/no-such-sweep')
        self.assertEqual(b.evaluate("document.getElementById('error').textContent"),
                         "no sweep named 'no-such-sweep'")
        # The one error this page may report: the 404 of the API call.
        self.assertTrue(b.errors and all('404' in text for _, text in b.errors), b.errors)

    def test_sweeps_page_says_leasing_is_paused(self):
        # Runs last (names sort), in the logged-in browser: the banner while
        # an admin has paused leasing server-wide, none once resumed.
        b = self.browser
        b.errors.clear()
        admin = [f'{BIN}/qkov', f'--server={self.grpc}', f'--token_file={self.dir}/admin.token']
        subprocess.run(admin + ['leasing', 'pause', '--reason', 'moving <the> database'],
                       check=True, capture_output=True, timeout=60)
        b.open(f'{self.base}/')
        banner = b.evaluate("(document.getElementById('leasing') || {}).textContent")
        self.assertIsNotNone(banner)
        self.assertIn('Leasing is paused server-wide since ', banner)
        self.assertIn(' by root: moving <the> database.', banner)
        self.assertEqual(b.evaluate("document.querySelectorAll('#leasing b, #leasing the').length"), 0)
        self.shot('leasing-paused.png')
        subprocess.run(admin + ['leasing', 'resume'], check=True, capture_output=True, timeout=60)
        b.open(f'{self.base}/')
        self.assertIsNone(b.evaluate("document.getElementById('leasing')"))
        self.assertNoErrors()

    def test_shows_hostile_strings_escaped(self):
        # Runs after test_pages_plot_and_live_updates (names sort), in its
        # logged-in browser; what that test's last page reported is its own.
        b = self.browser
        b.errors.clear()
        path = f'{self.dir}/hostile.yaml'
        with open(path, 'w') as f:
            f.write('name: hostile\n'
                    'description: "=cmd|calc \\u202e<img src=x onerror=window.pwned=1>'
                    '\\x1b[2J end"\n'
                    'axes: {parameterization: [FAFO], lr_ratio: [1], eta_ov: [0.1], seed: [1]}\n'
                    'training: {max_steps: 100, report_every: 50, evaluation: {num_examples: 64}}\n')
        self.qkov('submit', path)
        # A worker whose name would reorder and mark up the attempts table.
        with open(f'{self.dir}/worker.log', 'a') as log:
            w = subprocess.Popen([f'{BIN}/qkov-worker', f'--server={self.grpc}',
                                  f'--token_file={self.dir}/worker.token', '--exit_when_idle',
                                  '--name=evil\u202e<b>bold</b>'],
                                 stdout=log, stderr=subprocess.STDOUT)
        self.assertEqual(w.wait(300), 0, read(f'{self.dir}/worker.log')[-3000:])
        b.open(f'{self.base}/sweeps/hostile')
        header = b.evaluate("document.getElementById('sweep-header').textContent")
        self.assertIn('=cmd|calc \\u202e<img src=x onerror=window.pwned=1>\\x1b[2J end', header)
        self.assertNotIn('\u202e', header)
        self.assertNotIn('\x1b', header)
        self.assertEqual(b.evaluate("document.querySelectorAll('#sweep-header img').length"), 0)
        self.assertIsNone(b.evaluate('window.pwned'))
        # A finished sweep: no pace, no ETA, no stray "null".
        self.assertIn('1 done', header)
        self.assertIn('finished, priority', header)
        self.assertNotIn('trials/min', header)
        self.assertNotIn('null', header)
        self.shot('hostile-sweep.png')
        trial = b.evaluate('window.qkov.tableRows[0].trial_id')
        b.open(f'{self.base}/trials/{trial}')
        attempts = b.evaluate("document.getElementById('attempts').textContent")
        self.assertIn('evil\\u202e<b>bold</b>', attempts)
        self.assertNotIn('\u202e', attempts)
        self.assertEqual(b.evaluate("document.querySelectorAll('#attempts b').length"), 0)
        self.shot('hostile-trial.png')
        # The export is a download of data, with the dashboard's headers.
        head = b.evaluate("fetch('/api/v1/sweeps/hostile/export.csv').then((r) => "
                          "[r.status, r.headers.get('Content-Disposition'), "
                          "r.headers.get('X-Content-Type-Options')])")
        self.assertEqual(head, [200, 'attachment; filename="results.csv"', 'nosniff'])
        self.assertNoErrors()


if __name__ == '__main__':
    unittest.main(argv=sys.argv[:1], verbosity=2)
