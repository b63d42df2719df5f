/* Every htmx request that fails says so where it was made, with a way forward.
 *
 * The server answers a refusal it can explain in place (409 with the fresh row, 422 with the
 * form and its errors) and htmx swaps those. Everything else used to vanish: htmx swaps no 4xx
 * or 5xx answer, and a network failure has no answer at all, so an Approve with an expired
 * session left the row saying "pending". Here each such failure puts a notice (role="alert")
 * right after the form or control that made the request:
 *
 *   401  signed out (lib/login_redirect.py)   "Log in again" (a new tab) + "Retry"
 *   403  the page's CSRF token is stale        "Log in again" (a new tab) + "Retry"
 *        (X-Steward-Refusal: csrf)
 *   403  not allowed                           the server's reason + "Reload the page"
 *   404  gone                                  "Reload the page"
 *   429  too many requests                     the wait (Retry-After) + "Retry"
 *   5xx  the server failed                     the request id + "Retry" / "Reload the page"
 *   network error or timeout                   "Retry"
 *
 * Nothing on the page is replaced, so what the reviewer typed (a comment, a reason) stays in
 * its field. "Retry" first takes the current CSRF token from the csrftoken cookie (logging in
 * again in another tab rotates it) into the page's hx-headers and every form's hidden token,
 * then sends the same request again, with the same button. A request nobody made (a badge
 * poll) never shows a notice.
 */
(function () {
  "use strict";

  var LOGIN = "/accounts/login/";

  function cookie(name) {
    var parts = document.cookie ? document.cookie.split("; ") : [];
    for (var i = 0; i < parts.length; i++) {
      var eq = parts[i].indexOf("=");
      if (parts[i].slice(0, eq) === name) return decodeURIComponent(parts[i].slice(eq + 1));
    }
    return "";
  }

  // The CSRF token the server now expects, into everything that sends one.
  function refreshToken() {
    var token = cookie("csrftoken");
    if (!token) return;
    var headers = {};
    try { headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}"); } catch (e) { headers = {}; }
    headers["X-CSRFToken"] = token;
    document.body.setAttribute("hx-headers", JSON.stringify(headers));
    document.querySelectorAll("input[name=csrfmiddlewaretoken]").forEach(function (input) { input.value = token; });
  }

  // Requests the person made: a submit, a click, a field they changed. Not a poll or a load.
  function madeByPerson(detail) {
    var cfg = detail.requestConfig || {};
    var ev = cfg.triggeringEvent;
    return !!ev && ["submit", "click", "change", "input", "keyup", "search"].indexOf(ev.type) >= 0;
  }

  function anchorOf(elt) {
    return (elt.closest && elt.closest("form")) || elt;
  }

  function clear(anchor) {
    var next = anchor.nextElementSibling;
    if (next && next.hasAttribute("data-request-error")) next.remove();
  }

  function link(text, href, newTab) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    if (newTab) { a.target = "_blank"; a.rel = "noopener"; }
    return a;
  }

  function button(text, onClick) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.setAttribute("data-retry", "");
    b.addEventListener("click", onClick);
    return b;
  }

  // The refusal's own words: the alert of the refused page (templates/403.html,
  // review/refused.html), else nothing.
  function reason(xhr) {
    var text = xhr.responseText || "";
    if (!text || (xhr.getResponseHeader("Content-Type") || "").indexOf("html") < 0) return "";
    var doc = new DOMParser().parseFromString(text, "text/html");
    var alert = doc.querySelector("main [role=alert], main .refused, main p");
    return alert ? alert.textContent.trim().replace(/\s+/g, " ") : "";
  }

  function retryer(detail) {
    var elt = detail.elt;
    var ev = (detail.requestConfig || {}).triggeringEvent;
    var submitter = ev && ev.submitter;
    return function () {
      refreshToken();
      var anchor = anchorOf(elt);
      clear(anchor);
      if (elt.tagName === "FORM" && elt.isConnected) {
        if (submitter && submitter.matches("[data-item] [data-approve], [data-bulk-approve]")) {
          elt.dataset.confirmed = "yes"; // a confirmed approve is not asked again
        }
        if (submitter && submitter.isConnected && elt.requestSubmit) elt.requestSubmit(submitter);
        else if (elt.requestSubmit) elt.requestSubmit();
      } else if (elt.isConnected && window.htmx) {
        window.htmx.trigger(elt, ev ? ev.type : "click");
      }
    };
  }

  function show(detail, status) {
    var elt = detail.elt;
    if (!elt || !elt.isConnected || !madeByPerson(detail)) return;
    var xhr = detail.xhr;
    var anchor = anchorOf(elt);
    clear(anchor);
    var box = document.createElement("div");
    box.className = "request-error";
    box.setAttribute("role", "alert");
    box.setAttribute("data-request-error", String(status));
    var text = document.createElement("p");
    var actions = document.createElement("p");
    actions.className = "request-error-actions";
    var retry = button("Retry", retryer(detail));
    var refusal = xhr && xhr.getResponseHeader("X-Steward-Refusal");
    var login = (xhr && xhr.getResponseHeader("X-Steward-Login")) ||
      LOGIN + "?next=" + encodeURIComponent(window.location.pathname + window.location.search);
    var kept = " Nothing was saved; what you typed is still here.";
    if (status === 401 || refusal === "csrf") {
      text.textContent = (status === 401
        ? "Your session has ended, so this was not done."
        : "This page's security token is out of date (the session ended or you logged in again elsewhere), so this was not done.") +
        kept + " Log in again in a new tab, then press Retry.";
      actions.appendChild(link("Log in again", login, true));
      actions.appendChild(retry);
    } else if (status === 403) {
      text.textContent = "Not allowed: " + (reason(xhr) || "you may not do this.") + " Nothing was changed.";
      actions.appendChild(link("Reload the page", window.location.href));
    } else if (status === 404) {
      text.textContent = "This is no longer there (it may have been removed). Nothing was changed.";
      actions.appendChild(link("Reload the page", window.location.href));
    } else if (status === 429) {
      var wait = parseInt((xhr && xhr.getResponseHeader("Retry-After")) || "", 10);
      text.textContent = "Too many requests just now, so this was not done." + kept +
        (wait > 0 ? " Wait " + wait + " second" + (wait === 1 ? "" : "s") + ", then press Retry." : " Wait a moment, then press Retry.");
      actions.appendChild(retry);
    } else if (status === 503) {
      var pause = parseInt((xhr && xhr.getResponseHeader("Retry-After")) || "", 10);
      text.textContent = "The service cannot reach its database just now, so this may not have been done." + kept +
        (pause > 0 ? " Wait " + pause + " second" + (pause === 1 ? "" : "s") + ", then press Retry." : " Wait a moment, then press Retry.");
      actions.appendChild(retry);
      actions.appendChild(link("Reload the page", window.location.href));
    } else if (status >= 500) {
      var id = xhr && xhr.getResponseHeader("X-Request-ID");
      text.textContent = "The server failed (error " + status + "), so this may not have been done." + kept +
        " Press Retry, or reload the page to see the current state." + (id ? " Request id: " + id + "." : "");
      actions.appendChild(retry);
      actions.appendChild(link("Reload the page", window.location.href));
    } else if (status === 0) {
      text.textContent = "The server could not be reached (check the connection), so this was not done." + kept;
      actions.appendChild(retry);
    } else {
      text.textContent = "This was not done (error " + status + ")." + kept;
      actions.appendChild(retry);
      actions.appendChild(link("Reload the page", window.location.href));
    }
    box.appendChild(text);
    box.appendChild(actions);
    anchor.insertAdjacentElement("afterend", box);
    var focusable = actions.querySelector("a, button");
    if (focusable && anchor.contains(document.activeElement)) focusable.focus();
    else if (!document.activeElement || document.activeElement === document.body) box.setAttribute("tabindex", "-1");
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (elt && madeByPerson(event.detail)) clear(anchorOf(elt));
  });
  document.addEventListener("htmx:responseError", function (event) {
    show(event.detail, event.detail.xhr ? event.detail.xhr.status : 0);
  });
  document.addEventListener("htmx:sendError", function (event) { show(event.detail, 0); });
  document.addEventListener("htmx:timeout", function (event) { show(event.detail, 0); });
})();
