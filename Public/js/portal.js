// Enhancements only: every page works without this file.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  // A form marked data-submit-once disables its button on submit, so a double click sends one
  // request (the server refuses a second use of the form anyway).
  document.querySelectorAll("form[data-submit-once]").forEach(function (form) {
    form.addEventListener("submit", function () {
      // After the browser has read the form: a disabled button's name and value (the pressed
      // one's, e.g. enter=1) would be left out of what is sent.
      window.setTimeout(function () {
        form.querySelectorAll("button[type=submit]").forEach(function (button) { button.disabled = true; });
      }, 0);
    });
  });
  // Back to a page with such a form may restore it from the back/forward cache: its button still
  // disabled and its one-use form token already spent. Load it anew instead.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted && document.querySelector("form[data-submit-once]")) { window.location.reload(); }
  });

  // Two minutes before an idle session would end, say so; "Stay signed in" is a request, which
  // moves the session's idle deadline.
  var idle = document.getElementById("idle-notice");
  var idleWarning = document.getElementById("idle-warning");
  if (idle && idleWarning) {
    var idleSeconds = parseInt(idle.dataset.idleSeconds, 10);
    var warnTimer = null;
    var armIdleWarning = function () {
      idleWarning.hidden = true;
      window.clearTimeout(warnTimer);
      if (idleSeconds > 120) { warnTimer = window.setTimeout(function () { idleWarning.hidden = false; }, (idleSeconds - 120) * 1000); }
    };
    document.getElementById("stay-signed-in").addEventListener("click", function () {
      window.fetch(window.location.pathname, { method: "HEAD", credentials: "same-origin", cache: "no-store" }).then(armIdleWarning);
    });
    armIdleWarning();
  }

  var panel = document.getElementById("teletan-panel");
  if (!panel) { return; }

  // Browsers may keep this page in their back/forward cache (even with no-store): take the
  // teleTAN out of the page before it is stored, so Back never shows it again.
  function hideTeletan() {
    if (panel.isConnected) { panel.remove(); }
    document.getElementById("teletan-hidden").hidden = false;
  }
  window.addEventListener("pagehide", hideTeletan);
  window.addEventListener("pageshow", function (event) { if (event.persisted) { hideTeletan(); } });
  var teletan = document.getElementById("teletan");

  // Copy button: shown only where the clipboard API exists.
  var copy = document.getElementById("copy-teletan");
  if (copy && navigator.clipboard) {
    copy.hidden = false;
    var label = copy.textContent;
    var status = document.getElementById("copy-status");
    copy.addEventListener("click", function () {
      navigator.clipboard.writeText(teletan.textContent.replace(/\s+/g, "")).then(function () {
        copy.textContent = copy.dataset.copied;
        if (status) { status.textContent = copy.dataset.copied; }
        window.setTimeout(function () { copy.textContent = label; if (status) { status.textContent = ""; } }, 3000);
      }, function () {
        // Clipboard refused (permissions): the teleTAN is on screen to read out anyway.
        if (status) { status.textContent = copy.dataset.failed || ""; }
      });
    });
  }

  // Hide the teleTAN when its display time is over (the Refresh header leaves the page too).
  var seconds = parseInt(panel.dataset.hideAfter, 10);
  if (seconds > 0) {
    window.setTimeout(hideTeletan, seconds * 1000);
  }
});
