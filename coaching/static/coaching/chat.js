// Chat page: POST the message with Accept: text/event-stream and read the SSE frames from the
// response body (EventSource cannot POST). Tokens are appended as they arrive; the final event
// carries the stored reply, which replaces the streamed text (the server-side guard may have
// rewritten it). Then htmx reloads the message list from the server.
(function () {
  const form = document.getElementById("chat-form");
  if (!form) return;
  const list = document.getElementById("messages");
  const status = document.getElementById("chat-status");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;

  function bubble(role, text) {
    const div = document.createElement("div");
    div.className = "msg msg-" + role;
    const body = document.createElement("div");
    body.className = "body";
    body.textContent = text;
    div.appendChild(body);
    list.appendChild(div);
    return body;
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    const textarea = form.querySelector("textarea");
    const content = textarea.value.trim();
    if (!content) return;
    textarea.value = "";
    bubble("learner", content);
    const out = bubble("coach", "");
    status.textContent = "…";
    const key = (crypto.randomUUID && crypto.randomUUID()) || String(Date.now());
    let response;
    try {
      response = await fetch(form.dataset.sendUrl, {
        method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json", "Accept": "text/event-stream", "X-CSRFToken": csrf},
        body: JSON.stringify({content: content, idempotency_key: key}),
      });
    } catch (err) { status.textContent = "Network error: your message may not have been sent."; return; }
    const type = response.headers.get("Content-Type") || "";
    if (!type.startsWith("text/event-stream")) {
      const data = await response.json().catch(() => ({}));
      if (data.reply) out.textContent = data.reply.content;
      else status.textContent = (data.error && data.error.message) || ("Error " + response.status);
      htmx.trigger(document.body, "bloom:refresh");
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true});
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
        const name = (frame.match(/^event: (.*)$/m) || [])[1];
        const data = JSON.parse((frame.match(/^data: (.*)$/m) || [])[1] || "{}");
        if (name === "token") out.textContent += data.text;
        else if (name === "final") { out.textContent = data.content; status.textContent = ""; }
        else if (name === "unavailable" || name === "error") status.textContent = data.message;
      }
    }
    htmx.trigger(document.body, "bloom:refresh");
  });
})();
