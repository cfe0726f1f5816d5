'use strict';
// Says why the last login was refused (/login?failed=token|role).
(function () {
  const why = new URLSearchParams(location.search).get('failed');
  if (!why) return;
  const p = document.getElementById('failed');
  p.textContent = why === 'role'
    ? 'That token belongs to a worker; the dashboard needs a read-only, user or admin token.'
    : 'That token is not in the server\u2019s token file.';
  p.hidden = false;
})();
