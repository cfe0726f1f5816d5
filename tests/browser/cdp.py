"""A headless Chromium driven over the DevTools protocol, for browser tests.

Starts Debian's chromium with --remote-debugging-port=0, attaches to its page
over a websocket (python3-websocket), and records every console error,
uncaught exception and failed load the page reports.
"""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websocket


# DevTools' answers when an evaluation's page went away under it.
_NAVIGATION_ERRORS = ('Inspected target navigated or closed',
                      'Execution context was destroyed',
                      'Cannot find context with specified id')


def _read(path):
    with open(path) as f:
        return f.read()


class Browser:
    def __init__(self, chromium='/usr/bin/chromium', width=1400, height=1100):
        self.profile = tempfile.mkdtemp(prefix='qkov-chromium-')
        self.log = open(os.path.join(self.profile, 'chromium.log'), 'w')
        self.proc = subprocess.Popen(
            [chromium, '--headless=new', '--no-sandbox', '--disable-gpu',
             '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check',
             '--disable-extensions', '--disable-background-networking',
             f'--window-size={width},{height}', f'--user-data-dir={self.profile}',
             '--remote-debugging-port=0', 'about:blank'],
            stdout=self.log, stderr=self.log,
            # Chromium's own scratch directories go inside the profile, so
            # that removing it leaves nothing in /tmp.
            env=dict(os.environ, TMPDIR=self.profile))
        port_file = os.path.join(self.profile, 'DevToolsActivePort')
        deadline = time.time() + 60
        while not (os.path.exists(port_file) and _read(port_file).count('\n') >= 1):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError('chromium did not start: ' + _read(self.log.name)[-2000:])
            time.sleep(0.05)
        port = int(_read(port_file).split('\n')[0])
        pages = []
        while not pages:
            with urllib.request.urlopen(f'http://127.0.0.1:{port}/json/list') as r:
                pages = [t for t in json.load(r) if t['type'] == 'page']
            if not pages:
                time.sleep(0.05)
        self.ws = websocket.create_connection(pages[0]['webSocketDebuggerUrl'], timeout=60,
                                              suppress_origin=True)
        self.next_id = 0
        self.errors = []  # (url, text) of every console error the page reported
        self.url = ''
        for domain in ('Page', 'Runtime', 'Log'):
            self.call(f'{domain}.enable')

    def _event(self, message):
        method, params = message.get('method'), message.get('params', {})
        if method == 'Runtime.consoleAPICalled' and params.get('type') in ('error', 'assert'):
            text = ' '.join(str(a.get('value', a.get('description', ''))) for a in params.get('args', []))
            self.errors.append((self.url, 'console: ' + text))
        elif method == 'Runtime.exceptionThrown':
            d = params.get('exceptionDetails', {})
            self.errors.append((self.url, 'exception: ' + d.get('exception', {}).get('description', d.get('text', ''))))
        elif method == 'Log.entryAdded' and params.get('entry', {}).get('level') == 'error':
            e = params['entry']
            self.errors.append((self.url, f"{e.get('source')}: {e.get('text')} {e.get('url', '')}"))

    def call(self, method, **params):
        self.next_id += 1
        me = self.next_id
        self.ws.send(json.dumps({'id': me, 'method': method, 'params': params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get('id') == me:
                if 'error' in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get('result', {})
            self._event(message)

    def evaluate(self, expression):
        """The value of a JavaScript expression (awaited when a promise)."""
        r = self.call('Runtime.evaluate', expression=expression, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r['result'].get('value')

    def wait_for(self, expression, timeout=60, what=None):
        """Polls `expression` until it is truthy; its value."""
        deadline = time.time() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError as e:
                # A navigation (a redirect, a form post) can replace the page
                # while the expression runs; the next poll reads the new one.
                if not any(m in str(e) for m in _NAVIGATION_ERRORS):
                    raise
                value = None
            if value:
                return value
            if time.time() > deadline:
                raise AssertionError(f'timed out waiting for {what or expression} on {self.url}')
            time.sleep(0.1)

    def open(self, url, ready='window.qkov && window.qkov.ready', timeout=60):
        """Navigates to `url` and waits until `ready` holds there."""
        self.url = url
        self.call('Page.navigate', url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete' && "
                      f"({ready or 'true'})", timeout)

    def screenshot(self, path):
        r = self.call('Page.captureScreenshot', format='png')
        with open(path, 'wb') as f:
            f.write(base64.b64decode(r['data']))

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
